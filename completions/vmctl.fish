# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_vmctl_global_optspecs
    string join \n from= max-input-size= kubeconfig= context= n/namespace= A/all-namespaces o/output= no-color request-timeout= journal= now= h/help V/version
end

function __fish_vmctl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_vmctl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_vmctl_using_subcommand
    set -l cmd (__fish_vmctl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c vmctl -n "__fish_vmctl_needs_command" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_needs_command" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_needs_command" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_needs_command" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_needs_command" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_needs_command" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_needs_command" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_needs_command" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_needs_command" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_needs_command" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_needs_command" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_needs_command" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "status" -d 'What is going on with my VMs: node, phase, eviction strategy, migratability, evacuation and migrations, then the migrations in flight'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "plan-drain" -d 'Predict, before anything is cordoned, what draining a node will do to every VM'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "plan-maintenance" -d 'Predict a rolling maintenance (every node drained in turn): batches, time, how often each VM migrates, shutdowns, the first blocker; the default order next to a better one'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "drain" -d 'Drain node(s): the plan first, then cordon, evict like kubectl drain, follow every VM\'s evacuation live, stop with a diagnosis where a VM cannot leave'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "explain" -d 'Diagnose a migration: which plane failed, why, the evidence, and what to do'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "migrate" -d 'Start a live migration and follow it: through KubeVirt (a VM or VMI), or directly through libvirt (--connect SRC --to DST)'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "abort" -d 'Abort a migration in flight (refused in post-copy: the guest\'s state is split)'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "snapshot" -d 'Capture every object vmctl reads into one file that --from reads back'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "top" -d 'A live full-screen console: migrations in flight (post-copy marked), drains and evacuations, recent failures; keys to explain, abort (refused in post-copy), filter'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "record" -d 'Watch the cluster and write every migration\'s end to the journal (--journal), with its diagnosis, timeline and durations; runs until stopped (deploy/record.yaml in-cluster)'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "history" -d 'Migrations from the journal: what failed, why, how long, per node and per cause'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "man" -d 'Write the man pages'
complete -c vmctl -n "__fish_vmctl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l node -d 'Only VMIs running on this node' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -s l -l selector -d 'Only VMIs whose labels match this selector (e.g. app=db,tier!=web)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l loop-failures -d 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l sync-timeout -d 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l handoff-timeout -d 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -s w -l watch -d 'Keep watching: a live view of the migrations in flight, fed by watches'
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand status" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l bandwidth -d 'Transfer rate assumed per migration when the cluster sets no bandwidthPerMigration (a quantity per second, e.g. 1Gi, 500Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l prometheus -d 'As --metrics, from this Prometheus (one query)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l loop-failures -d 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l sync-timeout -d 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l handoff-timeout -d 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l chart -d 'When to draw the timeline (a Gantt of the waves or batches, blockers marked) after the table: auto = when stdout is a terminal. Never with -o json|yaml. Width: COLUMNS, else the terminal\'s, else 80; ASCII unless the locale is UTF-8' -r -f -a "auto\t'When stdout is a terminal'
always\t'Also into a pipe or a file (the width: COLUMNS, else 80)'
never\t'Never (the same as --no-chart)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l metrics -d 'Read each drained node\'s virt-handler /metrics page through the API server\'s pod proxy (get pods/proxy in KubeVirt\'s namespace; one request per node) for the guests\' dirty rates, and predict whether each live migration converges under its policy'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l no-chart -d 'No timeline (--chart never)'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-drain" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -s l -l selector -d 'The nodes these labels select, by name' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l max-unavailable -d 'Nodes drained at once (a MachineConfigPool\'s maxUnavailable)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l order -r -f -a "given\t'As given (by name with --all or -l)'
auto\t'vmctl\'s choice: nodes that cannot be drained last, the emptiest first'"
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l targets -r -f -a "any\t'Wherever the scheduler puts them'
done\t'Only nodes already done (a migration\'s addedNodeSelector can enforce it)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l upgrade-time -d 'Time to upgrade and reboot a drained node before it takes VMs again (e.g. 10m)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l bandwidth -d 'Transfer rate assumed per migration (as plan-drain --bandwidth)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l loop-failures -d 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l sync-timeout -d 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l handoff-timeout -d 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l chart -d 'When to draw the timeline (a Gantt of the waves or batches, blockers marked) after the table: auto = when stdout is a terminal. Never with -o json|yaml. Width: COLUMNS, else the terminal\'s, else 80; ASCII unless the locale is UTF-8' -r -f -a "auto\t'When stdout is a terminal'
always\t'Also into a pipe or a file (the width: COLUMNS, else 80)'
never\t'Never (the same as --no-chart)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l all -d 'Every node of the cluster, by name'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l no-chart -d 'No timeline (--chart never)'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand plan-maintenance" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l timeout -d 'Stop waiting after this long (e.g. 30m); 0 or absent: no limit, like kubectl drain. Migrations in flight go on (KubeVirt owns them)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l pod-selector -d 'Only evict the pods these labels select (as kubectl drain --pod-selector)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l grace-period -d 'Seconds each pod gets to terminate (the pod\'s own when absent, as kubectl\'s -1)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l max-parallel -d 'At most this many VMs evacuated at once (KubeVirt\'s own limits apply on top)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l bandwidth -d 'Transfer rate assumed per migration in the plan (as plan-drain --bandwidth)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l loop-failures -d 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l sync-timeout -d 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l handoff-timeout -d 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l dry-run -d 'Show the plan and what would be done; change nothing'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l ignore-daemonsets -d 'Leave DaemonSet-managed pods (as kubectl drain --ignore-daemonsets)'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l delete-emptydir-data -d 'Evict pods with emptyDir volumes, losing their data (as kubectl drain). A VM\'s launcher pod does not need it: the VM moves by live migration'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l force -d 'Evict pods that no controller owns (as kubectl drain --force)'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l allow-shutdowns -d 'Allow shutting down the VMs the plan shuts down (eviction strategy None, or not migratable with LiveMigrateIfPossible). Without it vmctl asks on a terminal and refuses elsewhere'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l force-partial -d 'Drain even when the plan says it will block: everything that can leave leaves, the blockers are listed at the end'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l no-wait -d 'Return once every eviction was accepted or handed to KubeVirt; do not wait for the VMs to arrive (follow with vmctl status --watch)'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand drain" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l connect -d 'Explain the last migration job of a libvirt domain on this libvirt URI instead' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l prometheus -d 'As --metrics, from this Prometheus (one query); also the migration\'s progress over time (one range query), drawn as sparklines' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l loop-failures -d 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l sync-timeout -d 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l handoff-timeout -d 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l history -d 'List every migration of the VMI still present, oldest first, with the backoff between them'
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l metrics -d 'For a data-plane failure, read the guest\'s dirty rate from virt-handler\'s /metrics through the API server\'s pod proxy (get pods/proxy in KubeVirt\'s namespace) and show it against the transfer rate'
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand explain" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l node-selector -d 'Restrict the target to nodes with these labels (KubeVirt: addedNodeSelector), k=v,...' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l timeout -d 'Give up waiting after this long (e.g. 90s, 15m); the migration itself goes on. With --connect (vmctl drives the migration) it is aborted instead, unless in post-copy' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l prometheus -d 'Read migration metrics from this Prometheus instead of virt-handler\'s pod proxy' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l connect -d 'libvirt: the source connection URI (e.g. qemu+ssh://host-a/system)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l to -d 'libvirt: the destination connection URI' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l bandwidth -d 'libvirt: bandwidth cap in MiB/s (1 to 1048576)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l postcopy-bandwidth -d 'libvirt: bandwidth cap in post-copy, MiB/s (1 to 1048576; needs --allow-postcopy; unlimited without it)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l max-downtime -d 'libvirt: maximum downtime in milliseconds (1 to 2000000, KubeVirt\'s range)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l completion-timeout-per-gib -d 'libvirt: completion budget per GiB of guest memory, in seconds (KubeVirt\'s default 150; 0 disables it; at most 86400)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l progress-timeout -d 'libvirt: abort when remaining data has not decreased for this many seconds (default 150; 0 disables it; at most 86400)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l parallel -d 'libvirt: parallel (multifd) connections (1 to 255)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l progress -d 'libvirt: `json` prints one JSON line per sample on stdout, for tooling' -r -f -a "json\t'One JSON line per sample on stdout'"
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l measure -d 'libvirt: measure the guest\'s dirty rate for this many seconds before starting (QEMU page sampling, one calculation a second, averaged; 1 to 10) and predict whether pre-copy converges, refusing what cannot complete. Without it vmctl starts at once and predicts from pass 1; --dry-run measures 3 s unless told otherwise' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l allow-postcopy -d 'Allow switching to post-copy when pre-copy does not converge. After the switch the guest runs on the target with memory still on the source: an abort or a network failure then loses the guest'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l allow-auto-converge -d 'Allow auto-converge: throttle the guest\'s CPUs until pre-copy converges'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l dry-run -d 'Print what would be created (or the libvirt flags and parameters) and change nothing'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l wait -d 'Follow the migration until it ends (the default)'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l no-wait -d 'Start the migration and return at once'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l allow-pause -d 'libvirt: pause the guest when pre-copy cannot converge and post-copy is not allowed'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l no-measure -d 'libvirt: --dry-run without measuring the dirty rate (a migration never measures before starting unless --measure)'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l force -d 'libvirt: start even when the prediction says nothing the flags allow can complete the migration (vmctl otherwise refuses, exit 1, and says what would)'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -s v -l verbose -d 'Say also what could not be read before the start (the prediction\'s metric and where it was looked for)'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand migrate" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l timeout -d 'Give up waiting after this long (e.g. 60s)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l connect -d 'libvirt: the connection URI of the domain\'s source host' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l evacuation -d 'Cancel a drain-triggered evacuation instead (clears evacuationNodeName)'
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l wait -d 'Wait for the abort to be reported (the default for libvirt)'
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l dry-run -d 'Print what would be deleted or called and change nothing'
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand abort" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -l node -d 'Only what concerns the VMIs on this node (plus every node, for capacity); said on stderr and in the file' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand snapshot" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l loop-failures -d 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l sync-timeout -d 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l handoff-timeout -d 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l dry-run -d 'Say what an abort would delete instead of deleting it'
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l metrics -d 'Read virt-handler\'s /metrics through the API server\'s pod proxy (get pods/proxy in KubeVirt\'s namespace) every 2 s, one GET per node a migration streams from, for progress of the data, the dirty rate and the ETA (without it, progress is against the completion budget). Each node\'s virt-handler pod is found once (one LIST)'
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand top" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l node -d 'Only the migrations of VMIs running on this node' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -s l -l selector -d 'Only the migrations of VMIs whose labels match this selector (e.g. app=db,tier!=web)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l cluster-name -d 'The name the records carry for this cluster (default: the kubeconfig context\'s cluster; in a pod, the cluster\'s URL host). One PostgreSQL journal holds a fleet of clusters by this name' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l retain -d 'Delete records that ended longer ago than this (at start, then every hour)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l max-size -d 'Keep the journal\'s records within this size, oldest deleted first (at start, then every hour); a quantity: 1Gi, 500Mi' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l loop-failures -d 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l sync-timeout -d 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l handoff-timeout -d 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand record" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l since -d 'Migrations that ended in this window, back from now (e.g. 36h, 7d, 2w; at most 10 years)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l cause -d 'Only migrations this cause ended (a cause id: vmctl explain --help lists them)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l outcome -d 'Only migrations that ended this way' -r -f -a "succeeded\t''
failed\t''
aborted\t''
vanished\t'The object vanished before it reached a final phase'"
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l limit -d 'At most this many migrations listed, newest first (0: all). The totals, per node and per cause, count every migration that matched' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l cluster -d 'Only the migrations of this cluster, as `vmctl record --cluster-name` (or the kubeconfig context\'s cluster) named it: one PostgreSQL journal holds a fleet' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l failed -d 'Only failed migrations (--outcome failed)'
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand history" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand completions" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -l dir -d 'Directory to write vmctl.1 and one page per command into; stdout (vmctl.1 only) when absent' -r -f -a "(__fish_complete_directories)"
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -l from -d 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -l max-input-size -d 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -l context -d 'The kubeconfig context to use' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -s n -l namespace -d 'Namespace scope (default: the context\'s namespace; all namespaces with --from)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -s o -l output -d 'Output format' -r -f -a "table\t'A human table'
wide\t'The table with more columns'
json\t'A stable JSON document (`apiVersion: vmctl/v1alpha1`)'
yaml\t'The same document as YAML'
html\t'A self-contained HTML report to attach to a ticket (explain and plan-drain only)'
name\t'One `kind.group/name` line per object, as kubectl\'s `-o name` (status only)'"
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -l request-timeout -d 'Seconds to wait for each API request' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -l journal -d 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -l now -d 'Evaluate as if the time were this RFC 3339 instant (reproducible output)' -r
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -s A -l all-namespaces -d 'Look in every namespace'
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -l no-color -d 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c vmctl -n "__fish_vmctl_using_subcommand man" -s V -l version -d 'Print version'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "status" -d 'What is going on with my VMs: node, phase, eviction strategy, migratability, evacuation and migrations, then the migrations in flight'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "plan-drain" -d 'Predict, before anything is cordoned, what draining a node will do to every VM'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "plan-maintenance" -d 'Predict a rolling maintenance (every node drained in turn): batches, time, how often each VM migrates, shutdowns, the first blocker; the default order next to a better one'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "drain" -d 'Drain node(s): the plan first, then cordon, evict like kubectl drain, follow every VM\'s evacuation live, stop with a diagnosis where a VM cannot leave'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "explain" -d 'Diagnose a migration: which plane failed, why, the evidence, and what to do'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "migrate" -d 'Start a live migration and follow it: through KubeVirt (a VM or VMI), or directly through libvirt (--connect SRC --to DST)'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "abort" -d 'Abort a migration in flight (refused in post-copy: the guest\'s state is split)'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "snapshot" -d 'Capture every object vmctl reads into one file that --from reads back'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "top" -d 'A live full-screen console: migrations in flight (post-copy marked), drains and evacuations, recent failures; keys to explain, abort (refused in post-copy), filter'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "record" -d 'Watch the cluster and write every migration\'s end to the journal (--journal), with its diagnosis, timeline and durations; runs until stopped (deploy/record.yaml in-cluster)'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "history" -d 'Migrations from the journal: what failed, why, how long, per node and per cause'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "completions" -d 'Print a shell completion script'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "man" -d 'Write the man pages'
complete -c vmctl -n "__fish_vmctl_using_subcommand help; and not __fish_seen_subcommand_from status plan-drain plan-maintenance drain explain migrate abort snapshot top record history completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
