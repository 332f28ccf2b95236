#!/usr/bin/env bash
# The release build, as the Dockerfile's build stage runs it and CI runs it as a plain script:
#   deploy/build-release.sh OUT
# installs into OUT:
#   bin/vmctl, bin/kubectl-vmctl (the kubectl plugin: `kubectl vmctl ...`), and every other
#     binary Cargo.toml declares (e.g. kubectl_complete-vmctl, kubectl's plugin completion)
#   share/man/man1/*.1, share/bash-completion/completions/vmctl,
#   share/zsh/site-functions/_vmctl, share/fish/vendor_completions.d/vmctl.fish
# The default build only (no libvirt: that build links LGPL libvirt and runs on hosts).
set -euo pipefail
out=${1:?usage: deploy/build-release.sh OUT}
cd "$(dirname "$0")/.."

cargo build --release --locked --bins
mkdir -p "$out/bin" "$out/share/man/man1" "$out/share/bash-completion/completions" \
  "$out/share/zsh/site-functions" "$out/share/fish/vendor_completions.d"
# The release profile keeps line tables for backtraces (122 MB); the installed copy keeps the
# symbols (function names in a backtrace) but not the line tables: 27 MB.
install_bin() {
  install -m 0755 "target/release/$1" "$out/bin/$1"
  if command -v strip >/dev/null; then strip --strip-debug "$out/bin/$1"; fi
}
install_bin vmctl
# kubectl-vmctl (the plugin) and kubectl_complete-vmctl (its completion) are the same
# program, which tells them apart by argv[0] (kubectl runs both with their path as argv[0]):
# links, not two more copies. cargo install makes copies.
ln -sf vmctl "$out/bin/kubectl-vmctl"
ln -sf vmctl "$out/bin/kubectl_complete-vmctl"
# Any other src/bin/* target cargo just built.
for bin in $(ls src/bin/*.rs | xargs -n1 basename | sed 's/\.rs$//'); do
  case "$bin" in kubectl-vmctl|kubectl_complete-vmctl) ;; *) install_bin "$bin" ;; esac
done
# The man pages and completions are generated from the same clap definitions and committed
# (tests/generated.rs keeps them current).
install -m 0644 man/*.1 "$out/share/man/man1/"
install -m 0644 completions/vmctl.bash "$out/share/bash-completion/completions/vmctl"
install -m 0644 completions/_vmctl "$out/share/zsh/site-functions/_vmctl"
install -m 0644 completions/vmctl.fish "$out/share/fish/vendor_completions.d/vmctl.fish"
# A smoke test of what was built: both names answer.
"$out/bin/vmctl" --version
"$out/bin/kubectl-vmctl" --version
