#!/bin/bash
# lab.sh - two libvirt "hosts" on one Linux box, for vmctl's real live-migration
# tests (tests/libvirt_e2e.rs) and benches/libvirt_migrate.sh.
# Adapted from the project's lab recipe (libvirt 11.3 + QEMU 10.0.2 from
# bookworm-backports, TCG, two libvirtd under unshare, loopback only).
#
#   lab.sh install   install packages (if missing), build the guest
#   lab.sh up        install + start the "src" and "dst" libvirtd, define+start
#                    the guest on src
#   lab.sh down      destroy guests, stop both daemons, kill leftover qemu
#   lab.sh status    show daemons/domains
#   lab.sh guest [wss_mib] [rate_mib] [mem_mib]   (re)create the guest on src
#   lab.sh daemons   restart a daemon that died (or was killed by a test), after
#                    killing the qemu it left behind
#   lab.sh env       print URIs as shell variables (eval "$(lab.sh env)")
#
# Isolation of the two daemons (same network namespace, loopback only):
#   * own UTS namespace  -> hostnames lab-src / lab-dst
#   * own host_uuid      -> libvirt's "Attempt to migrate guest to the same
#                           host" check compares host UUIDs from the cookie
#   * own mount namespace: /etc/libvirt /run/libvirt /var/lib/libvirt
#     /var/cache/libvirt /var/log/libvirt are bind-mounted from
#     $LAB/{src,dst}/... so the daemons share no state files
#   * own unix socket dir $LAB/{src,dst}/sock (visible from the host)
#   * dst's qemu listens for the incoming stream on 127.0.0.2:49176-49199,
#     src's on 127.0.0.3:49152-49175 (for migrating back); both loopback
# Everything lives under $LAB (default /tmp/lab); the only things written
# outside it are the Debian packages, a system user/group "libvirt-qemu"
# and those of the five mount points above that did not exist yet
# (recorded in $LAB/.created-dirs, removed again by `down`).
set -euo pipefail

LAB=${LAB:-/tmp/vmctl-lab}
SELF=$(readlink -f "$0")
HERE=$(dirname "$SELF")
# The sources may live in a read-only folder: work on a copy under $LAB.
if [[ $HERE != "$(readlink -f "$LAB" 2>/dev/null || echo "$LAB")" ]]; then
    mkdir -p "$LAB/guest"
    cp -u "$HERE"/guest/build.sh "$HERE"/guest/dirtier.c "$LAB/guest/"
    chmod -R u+w "$LAB/guest"
fi
SRC_URI="qemu+unix:///system?socket=$LAB/src/sock/libvirt-sock"
DST_URI="qemu+unix:///system?socket=$LAB/dst/sock/libvirt-sock"
DOM=${DOM:-labvm}
# Migration ports: src listens on PORT_BASE..+23, dst on +24..+47 (another lab on the same
# machine, with another LAB, needs another PORT_BASE).
PORT_BASE=${PORT_BASE:-49152}

# Package source: "backports" (default) = libvirt 11.3 + QEMU 10.0 from
# bookworm-backports; "stable" = libvirt 9.0 + QEMU 7.2 from bookworm.
# QEMU 7.2 TCG corrupted guest RAM on multi-second pre-copy migrations
# here (see LAB.md), so "stable" only suits the quick unthrottled case.
LAB_PKGS=${LAB_PKGS:-backports}
BASE_PKGS="cpio pkg-config util-linux gcc libc6-dev bc"
BPO_PKGS="libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libvirt-dev libvirt0
          libvirt-common libvirt-daemon-common libvirt-daemon-log
          qemu-system-x86 qemu-system-common qemu-system-data seabios"
STABLE_PKGS="libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libvirt-dev qemu-system-x86"
SYSDIRS="/etc/libvirt /run/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt"
# private apt configuration: the system's /etc/apt is left untouched
APTO=(-o Dir::Etc::sourcelist=/dev/null -o "Dir::Etc::sourceparts=$LAB/apt/sources"
      -o "Dir::State::Lists=$LAB/apt/lists" -o "Dir::Cache::archives=$LAB/apt/archives"
      -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root)

log() { printf '[lab %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
vsrc() { virsh -q -c "$SRC_URI" "$@"; }
vdst() { virsh -q -c "$DST_URI" "$@"; }
pkg_ver() { dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null | sed -n 's/^install ok installed //p'; }

write_apt_sources() {
    # The machine's own Debian sources (whatever mirror /etc/apt names), plus the backports
    # suite beside each "bookworm" suite.
    mkdir -p "$LAB/apt/sources" "$LAB/apt/lists/partial" "$LAB/apt/archives/partial"
    rm -f "$LAB/apt/sources/"*
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] || continue
        sed -E '/^Suites:/{/(^|[[:space:]])bookworm([[:space:]]|$)/ s/$/ bookworm-backports/}' "$f" \
            > "$LAB/apt/sources/$(basename "$f")"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f $f ]] || continue
        awk '$1 == "deb" { print; for (i = 2; i <= NF; i++) if ($i == "bookworm") { $i = "bookworm-backports"; print; break } }' \
            "$f" > "$LAB/apt/sources/$(basename "$f").list"
    done
    if ! grep -rqs bookworm-backports "$LAB/apt/sources"; then
        log "no Debian bookworm source in /etc/apt to add bookworm-backports to"
        return 1
    fi
}

install_pkgs() {
    write_apt_sources
    local want=() p
    for p in $BASE_PKGS; do [[ -n $(pkg_ver "$p") ]] || want+=("$p"); done
    if [[ $LAB_PKGS == backports ]]; then
        for p in $BPO_PKGS; do [[ $(pkg_ver "$p") == *bpo12* ]] || want+=("$p/bookworm-backports"); done
    else
        for p in $STABLE_PKGS; do [[ -n $(pkg_ver "$p") ]] || want+=("$p"); done
    fi
    if ((${#want[@]} == 0)) && compgen -G "$LAB/apt/lists/*_Packages" >/dev/null; then
        return 0
    fi
    apt-get "${APTO[@]}" update -qq
    ((${#want[@]})) || return 0
    log "installing: ${want[*]}"
    # no systemd as PID 1 + policy-rc.d: the postinst scripts start no daemon
    DEBIAN_FRONTEND=noninteractive apt-get "${APTO[@]}" install -y -qq --no-install-recommends \
        "${want[@]}" > "$LAB/apt/install.log" 2>&1 || { tail -20 "$LAB/apt/install.log" >&2; exit 1; }
}

ensure_user() {
    # libvirt's qemu driver resolves its compiled-in default user/group
    # (libvirt-qemu) before it reads qemu.conf; libvirt-daemon-system's
    # postinst would create it, but that package drags in a lot more.
    getent group libvirt-qemu >/dev/null || groupadd --system libvirt-qemu
    getent passwd libvirt-qemu >/dev/null ||
        useradd --system --gid libvirt-qemu --no-create-home --home-dir /var/lib/libvirt \
                --shell /usr/sbin/nologin libvirt-qemu
}

build_guest() {
    if [[ ! -s $LAB/guest/out/initrd.gz || ! -s $LAB/guest/out/vmlinuz ||
          $LAB/guest/dirtier.c -nt $LAB/guest/out/initrd.gz ]]; then
        log "building guest kernel+initramfs"
        LAB_APT_OPTS="${APTO[*]}" "$LAB/guest/build.sh" >/dev/null
    fi
}

write_conf() { # side host_uuid port_min port_max migration_ip
    local side=$1 uuid=$2 pmin=$3 pmax=$4 ip=$5 d=$LAB/$1
    mkdir -p "$d"/{etc/libvirt/qemu,run,lib,cache,log,sock}
    cat > "$d/etc/libvirt/libvirtd.conf" <<EOF
# generated by lab.sh ($side)
unix_sock_dir = "$d/sock"
unix_sock_group = "root"
unix_sock_ro_perms = "0770"
unix_sock_rw_perms = "0770"
auth_unix_ro = "none"
auth_unix_rw = "none"
host_uuid = "$uuid"
log_outputs = "3:file:$d/libvirtd.log"
keepalive_interval = 5
keepalive_count = 10
EOF
    cat > "$d/etc/libvirt/qemu.conf" <<EOF
# generated by lab.sh ($side)
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
stdio_handler = "file"
# libvirt refuses exactly 127.0.0.1 / ::1 / localhost* here ("must not be
# the address of the local machine"); the rest of 127.0.0.0/8 is loopback too
migration_address = "$ip"
migration_host = "$ip"
migration_port_min = $pmin
migration_port_max = $pmax
EOF
    : > "$d/etc/libvirt/libvirt.conf"
}

# Runs inside "unshare --mount --uts --propagation private"; becomes libvirtd.
daemon_inner() {
    local side=$1 d=$LAB/$1
    hostname "lab-$side"
    mount --bind "$d/etc/libvirt" /etc/libvirt
    mount --bind "$d/run" /run/libvirt
    mount --bind "$d/lib" /var/lib/libvirt
    mount --bind "$d/cache" /var/cache/libvirt
    mount --bind "$d/log" /var/log/libvirt
    exec libvirtd --config /etc/libvirt/libvirtd.conf --pid-file "$d/libvirtd.pid"
}

side_uri() { if [[ $1 == src ]]; then echo "$SRC_URI"; else echo "$DST_URI"; fi; }

start_daemon() { # side
    local side=$1 d=$LAB/$1 uri
    uri=$(side_uri "$side")
    if daemon_alive "$side"; then
        log "$side libvirtd already running (pid $(cat "$d/daemon.pid"))"
        return
    fi
    rm -f "$d/sock/"* "$d/libvirtd.pid"
    local m
    for m in $SYSDIRS; do   # mount points; remember the ones we create (down removes those)
        [[ -d $m ]] || { mkdir -p "$m" && echo "$m" >> "$LAB/.created-dirs"; }
    done
    # setsid+unshare+exec: $! is libvirtd's own PID
    setsid unshare --mount --uts --propagation private -- "$SELF" _inner "$side" \
        > "$d/libvirtd.stdout" 2>&1 < /dev/null &
    echo $! > "$d/daemon.pid"
    local i
    for i in $(seq 150); do
        virsh -q -c "$uri" version >/dev/null 2>&1 && break
        kill -0 "$(cat "$d/daemon.pid")" 2>/dev/null || break
        sleep 0.2
    done
    virsh -q -c "$uri" hostname >/dev/null || { cat "$d/libvirtd.stdout" "$d/libvirtd.log" >&2; exit 1; }
    log "$side libvirtd up: pid $(cat "$d/daemon.pid"), hostname $(virsh -q -c "$uri" hostname)," \
        "host uuid $(virsh -q -c "$uri" capabilities | grep -m1 -o '<uuid>[^<]*' | cut -c7-)"
}

domain_xml() { # wss_mib rate_mib mem_mib
    cat <<EOF
<domain type='qemu'>
  <name>$DOM</name>
  <uuid>5a1f0c3e-7b2d-4e8a-9c41-0d2b6e9f1a77</uuid>
  <memory unit='MiB'>$3</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$LAB/guest/out/vmlinuz</kernel>
    <initrd>$LAB/guest/out/initrd.gz</initrd>
    <cmdline>console=ttyS0 rdinit=/init panic=-1 quiet wss_mib=$1 rate_mib=$2</cmdline>
  </os>
  <cpu mode='custom' match='exact'><model fallback='forbid'>qemu64</model></cpu>
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <controller type='usb' model='none'/>
    <serial type='file'>
      <source path='$LAB/console-$DOM.log' append='on'/>
      <target port='0'/>
    </serial>
    <console type='file'>
      <source path='$LAB/console-$DOM.log' append='on'/>
      <target type='serial' port='0'/>
    </console>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
}

destroy_everywhere() {
    local uri i left
    for i in $(seq 50); do
        left=0
        for uri in "$SRC_URI" "$DST_URI"; do
            [[ -S ${uri##*socket=} ]] || continue
            virsh -q -c "$uri" domstate "$DOM" >/dev/null 2>&1 || continue
            left=1
            # In post-copy (failed or not) an abort is refused, or waits 30 s for the job of a
            # destination stuck in its Finish phase: destroy at once.
            [[ $(virsh -q -c "$uri" domstate --reason "$DOM" 2>/dev/null) == *post-copy* ]] ||
                virsh -q -c "$uri" domjobabort "$DOM" >/dev/null 2>&1 || true
            virsh -q -c "$uri" destroy "$DOM" >/dev/null 2>&1 || true
            virsh -q -c "$uri" undefine "$DOM" >/dev/null 2>&1 || true
        done
        ((left)) || return 0
        sleep 0.2   # a guest still shutting down: try again until neither side knows it
    done
    log "could not remove $DOM: $(virsh -q -c "$SRC_URI" domstate "$DOM" 2>&1) / $(virsh -q -c "$DST_URI" domstate "$DOM" 2>&1)"
    return 1
}

start_guest() { # wss rate mem
    local wss=${1:-160} rate=${2:-16} mem=${3:-256} i
    destroy_everywhere
    : > "$LAB/console-$DOM.log"
    domain_xml "$wss" "$rate" "$mem" > "$LAB/$DOM.xml"
    vsrc define "$LAB/$DOM.xml" >/dev/null
    vsrc start "$DOM" >/dev/null
    log "guest $DOM started on src (mem=${mem}MiB wss=${wss}MiB rate=${rate}MiB/s), waiting for first heartbeat"
    for i in $(seq 120); do grep -aq '^beat' "$LAB/console-$DOM.log" && break; sleep 0.5; done
    grep -a -m1 '^beat' "$LAB/console-$DOM.log" >&2 || { log "guest produced no heartbeat"; exit 1; }
}

kill_stale_qemu() { # side
    local f pid
    for f in "$LAB/$1"/run/qemu/*.pid; do   # qemu left behind by a dead daemon
        [[ -f $f && $f != */driver.pid ]] || continue
        pid=$(cat "$f")
        # only if that PID really is a qemu of this lab (no PID-reuse accidents)
        if tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "qemu-system.*$LAB/"; then
            kill "$pid" && log "killed stale qemu $pid"
        fi
    done
}

# alive = answers on its socket (a killed daemon may linger as a zombie: kill -0 is not enough)
daemon_alive() { virsh -q -c "$(side_uri "$1")" hostname >/dev/null 2>&1; }

stop_all() {
    destroy_everywhere
    local side d pid m
    for side in src dst; do
        d=$LAB/$side
        kill_stale_qemu "$side"
        if [[ -f $d/daemon.pid ]]; then
            pid=$(cat "$d/daemon.pid")
            if tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q '^libvirtd '; then
                kill "$pid"
                for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                kill -9 "$pid" 2>/dev/null || true
                log "stopped $side libvirtd (pid $pid)"
            fi
            rm -f "$d/daemon.pid" "$d/libvirtd.pid"
        fi
    done
    if [[ -f $LAB/.created-dirs ]]; then
        sort -u "$LAB/.created-dirs" | while read -r m; do rmdir "$m" 2>/dev/null || true; done
        rm -f "$LAB/.created-dirs"
    fi
}

case "${1:-}" in
    _inner) daemon_inner "$2" ;;
    env) printf 'SRC_URI=%q\nDST_URI=%q\nDOM=%q\n' "$SRC_URI" "$DST_URI" "$DOM" ;;
    install) install_pkgs; ensure_user; build_guest ;;
    up)
        t0=$SECONDS
        install_pkgs
        ensure_user
        build_guest
        write_conf src 3f6c2a5e-8d41-4b9e-a7c3-51e0d9b2f4a1 "$PORT_BASE" $((PORT_BASE + 23)) 127.0.0.3
        write_conf dst b7e914c2-2f6a-4d3b-9e58-c0a4173d6e92 $((PORT_BASE + 24)) $((PORT_BASE + 47)) 127.0.0.2
        start_daemon src
        start_daemon dst
        start_guest "${WSS:-160}" "${RATE:-16}" "${MEM:-256}"
        log "up in $((SECONDS - t0))s.  eval \"\$($SELF env)\"; virsh -c \"\$SRC_URI\" list"
        ;;
    guest) start_guest "${2:-160}" "${3:-16}" "${4:-256}" ;;
    daemons)
        for side in src dst; do
            daemon_alive "$side" && continue
            kill_stale_qemu "$side"
            start_daemon "$side"
        done
        ;;
    down) stop_all ;;
    status)
        for side in src dst; do
            uri=$(side_uri "$side")
            echo "== $side: $(virsh -q -c "$uri" hostname 2>/dev/null || echo DOWN)"
            virsh -q -c "$uri" list --all 2>/dev/null || true
        done
        ;;
    *) sed -n '2,16p' "$SELF"; exit 2 ;;
esac
