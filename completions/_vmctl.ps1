
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'vmctl' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'vmctl'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'vmctl' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'What is going on with my VMs: node, phase, eviction strategy, migratability, evacuation and migrations, then the migrations in flight')
            [CompletionResult]::new('plan-drain', 'plan-drain', [CompletionResultType]::ParameterValue, 'Predict, before anything is cordoned, what draining a node will do to every VM')
            [CompletionResult]::new('plan-maintenance', 'plan-maintenance', [CompletionResultType]::ParameterValue, 'Predict a rolling maintenance (every node drained in turn): batches, time, how often each VM migrates, shutdowns, the first blocker; the default order next to a better one')
            [CompletionResult]::new('drain', 'drain', [CompletionResultType]::ParameterValue, 'Drain node(s): the plan first, then cordon, evict like kubectl drain, follow every VM''s evacuation live, stop with a diagnosis where a VM cannot leave')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Diagnose a migration: which plane failed, why, the evidence, and what to do')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Start a live migration and follow it: through KubeVirt (a VM or VMI), or directly through libvirt (--connect SRC --to DST)')
            [CompletionResult]::new('abort', 'abort', [CompletionResultType]::ParameterValue, 'Abort a migration in flight (refused in post-copy: the guest''s state is split)')
            [CompletionResult]::new('snapshot', 'snapshot', [CompletionResultType]::ParameterValue, 'Capture every object vmctl reads into one file that --from reads back')
            [CompletionResult]::new('top', 'top', [CompletionResultType]::ParameterValue, 'A live full-screen console: migrations in flight (post-copy marked), drains and evacuations, recent failures; keys to explain, abort (refused in post-copy), filter')
            [CompletionResult]::new('record', 'record', [CompletionResultType]::ParameterValue, 'Watch the cluster and write every migration''s end to the journal (--journal), with its diagnosis, timeline and durations; runs until stopped (deploy/record.yaml in-cluster)')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'Migrations from the journal: what failed, why, how long, per node and per cause')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Write the man pages')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'vmctl;status' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'Only VMIs running on this node')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only VMIs whose labels match this selector (e.g. app=db,tier!=web)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only VMIs whose labels match this selector (e.g. app=db,tier!=web)')
            [CompletionResult]::new('--loop-failures', '--loop-failures', [CompletionResultType]::ParameterName, 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)')
            [CompletionResult]::new('--sync-timeout', '--sync-timeout', [CompletionResultType]::ParameterName, 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)')
            [CompletionResult]::new('--handoff-timeout', '--handoff-timeout', [CompletionResultType]::ParameterName, 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Keep watching: a live view of the migrations in flight, fed by watches')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Keep watching: a live view of the migrations in flight, fed by watches')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;plan-drain' {
            [CompletionResult]::new('--bandwidth', '--bandwidth', [CompletionResultType]::ParameterName, 'Transfer rate assumed per migration when the cluster sets no bandwidthPerMigration (a quantity per second, e.g. 1Gi, 500Mi)')
            [CompletionResult]::new('--prometheus', '--prometheus', [CompletionResultType]::ParameterName, 'As --metrics, from this Prometheus (one query)')
            [CompletionResult]::new('--loop-failures', '--loop-failures', [CompletionResultType]::ParameterName, 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)')
            [CompletionResult]::new('--sync-timeout', '--sync-timeout', [CompletionResultType]::ParameterName, 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)')
            [CompletionResult]::new('--handoff-timeout', '--handoff-timeout', [CompletionResultType]::ParameterName, 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off')
            [CompletionResult]::new('--chart', '--chart', [CompletionResultType]::ParameterName, 'When to draw the timeline (a Gantt of the waves or batches, blockers marked) after the table: auto = when stdout is a terminal. Never with -o json|yaml. Width: COLUMNS, else the terminal''s, else 80; ASCII unless the locale is UTF-8')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Read each drained node''s virt-handler /metrics page through the API server''s pod proxy (get pods/proxy in KubeVirt''s namespace; one request per node) for the guests'' dirty rates, and predict whether each live migration converges under its policy')
            [CompletionResult]::new('--no-chart', '--no-chart', [CompletionResultType]::ParameterName, 'No timeline (--chart never)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;plan-maintenance' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'The nodes these labels select, by name')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'The nodes these labels select, by name')
            [CompletionResult]::new('--max-unavailable', '--max-unavailable', [CompletionResultType]::ParameterName, 'Nodes drained at once (a MachineConfigPool''s maxUnavailable)')
            [CompletionResult]::new('--order', '--order', [CompletionResultType]::ParameterName, 'order')
            [CompletionResult]::new('--targets', '--targets', [CompletionResultType]::ParameterName, 'targets')
            [CompletionResult]::new('--upgrade-time', '--upgrade-time', [CompletionResultType]::ParameterName, 'Time to upgrade and reboot a drained node before it takes VMs again (e.g. 10m)')
            [CompletionResult]::new('--bandwidth', '--bandwidth', [CompletionResultType]::ParameterName, 'Transfer rate assumed per migration (as plan-drain --bandwidth)')
            [CompletionResult]::new('--loop-failures', '--loop-failures', [CompletionResultType]::ParameterName, 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)')
            [CompletionResult]::new('--sync-timeout', '--sync-timeout', [CompletionResultType]::ParameterName, 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)')
            [CompletionResult]::new('--handoff-timeout', '--handoff-timeout', [CompletionResultType]::ParameterName, 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off')
            [CompletionResult]::new('--chart', '--chart', [CompletionResultType]::ParameterName, 'When to draw the timeline (a Gantt of the waves or batches, blockers marked) after the table: auto = when stdout is a terminal. Never with -o json|yaml. Width: COLUMNS, else the terminal''s, else 80; ASCII unless the locale is UTF-8')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every node of the cluster, by name')
            [CompletionResult]::new('--no-chart', '--no-chart', [CompletionResultType]::ParameterName, 'No timeline (--chart never)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;drain' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop waiting after this long (e.g. 30m); 0 or absent: no limit, like kubectl drain. Migrations in flight go on (KubeVirt owns them)')
            [CompletionResult]::new('--pod-selector', '--pod-selector', [CompletionResultType]::ParameterName, 'Only evict the pods these labels select (as kubectl drain --pod-selector)')
            [CompletionResult]::new('--grace-period', '--grace-period', [CompletionResultType]::ParameterName, 'Seconds each pod gets to terminate (the pod''s own when absent, as kubectl''s -1)')
            [CompletionResult]::new('--max-parallel', '--max-parallel', [CompletionResultType]::ParameterName, 'At most this many VMs evacuated at once (KubeVirt''s own limits apply on top)')
            [CompletionResult]::new('--bandwidth', '--bandwidth', [CompletionResultType]::ParameterName, 'Transfer rate assumed per migration in the plan (as plan-drain --bandwidth)')
            [CompletionResult]::new('--loop-failures', '--loop-failures', [CompletionResultType]::ParameterName, 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)')
            [CompletionResult]::new('--sync-timeout', '--sync-timeout', [CompletionResultType]::ParameterName, 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)')
            [CompletionResult]::new('--handoff-timeout', '--handoff-timeout', [CompletionResultType]::ParameterName, 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Show the plan and what would be done; change nothing')
            [CompletionResult]::new('--ignore-daemonsets', '--ignore-daemonsets', [CompletionResultType]::ParameterName, 'Leave DaemonSet-managed pods (as kubectl drain --ignore-daemonsets)')
            [CompletionResult]::new('--delete-emptydir-data', '--delete-emptydir-data', [CompletionResultType]::ParameterName, 'Evict pods with emptyDir volumes, losing their data (as kubectl drain). A VM''s launcher pod does not need it: the VM moves by live migration')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Evict pods that no controller owns (as kubectl drain --force)')
            [CompletionResult]::new('--allow-shutdowns', '--allow-shutdowns', [CompletionResultType]::ParameterName, 'Allow shutting down the VMs the plan shuts down (eviction strategy None, or not migratable with LiveMigrateIfPossible). Without it vmctl asks on a terminal and refuses elsewhere')
            [CompletionResult]::new('--force-partial', '--force-partial', [CompletionResultType]::ParameterName, 'Drain even when the plan says it will block: everything that can leave leaves, the blockers are listed at the end')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Return once every eviction was accepted or handed to KubeVirt; do not wait for the VMs to arrive (follow with vmctl status --watch)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;explain' {
            [CompletionResult]::new('--connect', '--connect', [CompletionResultType]::ParameterName, 'Explain the last migration job of a libvirt domain on this libvirt URI instead')
            [CompletionResult]::new('--prometheus', '--prometheus', [CompletionResultType]::ParameterName, 'As --metrics, from this Prometheus (one query); also the migration''s progress over time (one range query), drawn as sparklines')
            [CompletionResult]::new('--loop-failures', '--loop-failures', [CompletionResultType]::ParameterName, 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)')
            [CompletionResult]::new('--sync-timeout', '--sync-timeout', [CompletionResultType]::ParameterName, 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)')
            [CompletionResult]::new('--handoff-timeout', '--handoff-timeout', [CompletionResultType]::ParameterName, 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('--history', '--history', [CompletionResultType]::ParameterName, 'List every migration of the VMI still present, oldest first, with the backoff between them')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'For a data-plane failure, read the guest''s dirty rate from virt-handler''s /metrics through the API server''s pod proxy (get pods/proxy in KubeVirt''s namespace) and show it against the transfer rate')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;migrate' {
            [CompletionResult]::new('--node-selector', '--node-selector', [CompletionResultType]::ParameterName, 'Restrict the target to nodes with these labels (KubeVirt: addedNodeSelector), k=v,...')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up waiting after this long (e.g. 90s, 15m); the migration itself goes on. With --connect (vmctl drives the migration) it is aborted instead, unless in post-copy')
            [CompletionResult]::new('--prometheus', '--prometheus', [CompletionResultType]::ParameterName, 'Read migration metrics from this Prometheus instead of virt-handler''s pod proxy')
            [CompletionResult]::new('--connect', '--connect', [CompletionResultType]::ParameterName, 'libvirt: the source connection URI (e.g. qemu+ssh://host-a/system)')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'libvirt: the destination connection URI')
            [CompletionResult]::new('--bandwidth', '--bandwidth', [CompletionResultType]::ParameterName, 'libvirt: bandwidth cap in MiB/s (1 to 1048576)')
            [CompletionResult]::new('--postcopy-bandwidth', '--postcopy-bandwidth', [CompletionResultType]::ParameterName, 'libvirt: bandwidth cap in post-copy, MiB/s (1 to 1048576; needs --allow-postcopy; unlimited without it)')
            [CompletionResult]::new('--max-downtime', '--max-downtime', [CompletionResultType]::ParameterName, 'libvirt: maximum downtime in milliseconds (1 to 2000000, KubeVirt''s range)')
            [CompletionResult]::new('--completion-timeout-per-gib', '--completion-timeout-per-gib', [CompletionResultType]::ParameterName, 'libvirt: completion budget per GiB of guest memory, in seconds (KubeVirt''s default 150; 0 disables it; at most 86400)')
            [CompletionResult]::new('--progress-timeout', '--progress-timeout', [CompletionResultType]::ParameterName, 'libvirt: abort when remaining data has not decreased for this many seconds (default 150; 0 disables it; at most 86400)')
            [CompletionResult]::new('--parallel', '--parallel', [CompletionResultType]::ParameterName, 'libvirt: parallel (multifd) connections (1 to 255)')
            [CompletionResult]::new('--progress', '--progress', [CompletionResultType]::ParameterName, 'libvirt: `json` prints one JSON line per sample on stdout, for tooling')
            [CompletionResult]::new('--measure', '--measure', [CompletionResultType]::ParameterName, 'libvirt: measure the guest''s dirty rate for this many seconds before starting (QEMU page sampling, one calculation a second, averaged; 1 to 10) and predict whether pre-copy converges, refusing what cannot complete. Without it vmctl starts at once and predicts from pass 1; --dry-run measures 3 s unless told otherwise')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('--allow-postcopy', '--allow-postcopy', [CompletionResultType]::ParameterName, 'Allow switching to post-copy when pre-copy does not converge. After the switch the guest runs on the target with memory still on the source: an abort or a network failure then loses the guest')
            [CompletionResult]::new('--allow-auto-converge', '--allow-auto-converge', [CompletionResultType]::ParameterName, 'Allow auto-converge: throttle the guest''s CPUs until pre-copy converges')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print what would be created (or the libvirt flags and parameters) and change nothing')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Follow the migration until it ends (the default)')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Start the migration and return at once')
            [CompletionResult]::new('--allow-pause', '--allow-pause', [CompletionResultType]::ParameterName, 'libvirt: pause the guest when pre-copy cannot converge and post-copy is not allowed')
            [CompletionResult]::new('--no-measure', '--no-measure', [CompletionResultType]::ParameterName, 'libvirt: --dry-run without measuring the dirty rate (a migration never measures before starting unless --measure)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'libvirt: start even when the prediction says nothing the flags allow can complete the migration (vmctl otherwise refuses, exit 1, and says what would)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say also what could not be read before the start (the prediction''s metric and where it was looked for)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say also what could not be read before the start (the prediction''s metric and where it was looked for)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;abort' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up waiting after this long (e.g. 60s)')
            [CompletionResult]::new('--connect', '--connect', [CompletionResultType]::ParameterName, 'libvirt: the connection URI of the domain''s source host')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('--evacuation', '--evacuation', [CompletionResultType]::ParameterName, 'Cancel a drain-triggered evacuation instead (clears evacuationNodeName)')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Wait for the abort to be reported (the default for libvirt)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print what would be deleted or called and change nothing')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;snapshot' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'Only what concerns the VMIs on this node (plus every node, for capacity); said on stderr and in the file')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;top' {
            [CompletionResult]::new('--loop-failures', '--loop-failures', [CompletionResultType]::ParameterName, 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)')
            [CompletionResult]::new('--sync-timeout', '--sync-timeout', [CompletionResultType]::ParameterName, 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)')
            [CompletionResult]::new('--handoff-timeout', '--handoff-timeout', [CompletionResultType]::ParameterName, 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Say what an abort would delete instead of deleting it')
            [CompletionResult]::new('--metrics', '--metrics', [CompletionResultType]::ParameterName, 'Read virt-handler''s /metrics through the API server''s pod proxy (get pods/proxy in KubeVirt''s namespace) every 2 s, one GET per node a migration streams from, for progress of the data, the dirty rate and the ETA (without it, progress is against the completion budget). Each node''s virt-handler pod is found once (one LIST)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;record' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'Only the migrations of VMIs running on this node')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only the migrations of VMIs whose labels match this selector (e.g. app=db,tier!=web)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only the migrations of VMIs whose labels match this selector (e.g. app=db,tier!=web)')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'The name the records carry for this cluster (default: the kubeconfig context''s cluster; in a pod, the cluster''s URL host). One PostgreSQL journal holds a fleet of clusters by this name')
            [CompletionResult]::new('--retain', '--retain', [CompletionResultType]::ParameterName, 'Delete records that ended longer ago than this (at start, then every hour)')
            [CompletionResult]::new('--max-size', '--max-size', [CompletionResultType]::ParameterName, 'Keep the journal''s records within this size, oldest deleted first (at start, then every hour); a quantity: 1Gi, 500Mi')
            [CompletionResult]::new('--loop-failures', '--loop-failures', [CompletionResultType]::ParameterName, 'Consecutive failed evacuation migrations of a VM still marked for evacuation that make an evacuation loop (1 to 5: KubeVirt keeps only the newest five finished migrations)')
            [CompletionResult]::new('--sync-timeout', '--sync-timeout', [CompletionResultType]::ParameterName, 'A decentralized migration in WaitingForSync or Synchronizing for longer than this is stuck (KubeVirt has no timeout for these phases)')
            [CompletionResult]::new('--handoff-timeout', '--handoff-timeout', [CompletionResultType]::ParameterName, 'A migration with backend storage (persistent TPM/EFI) still Running this long after its stream ended is stuck in the PVC hand-off')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;history' {
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Migrations that ended in this window, back from now (e.g. 36h, 7d, 2w; at most 10 years)')
            [CompletionResult]::new('--cause', '--cause', [CompletionResultType]::ParameterName, 'Only migrations this cause ended (a cause id: vmctl explain --help lists them)')
            [CompletionResult]::new('--outcome', '--outcome', [CompletionResultType]::ParameterName, 'Only migrations that ended this way')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'At most this many migrations listed, newest first (0: all). The totals, per node and per cause, count every migration that matched')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'Only the migrations of this cluster, as `vmctl record --cluster-name` (or the kubeconfig context''s cluster) named it: one PostgreSQL journal holds a fleet')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('--failed', '--failed', [CompletionResultType]::ParameterName, 'Only failed migrations (--outcome failed)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;completions' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;man' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Directory to write vmctl.1 and one page per command into; stdout (vmctl.1 only) when absent')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--max-input-size', '--max-input-size', [CompletionResultType]::ParameterName, 'The most vmctl reads (a quantity: 2Gi, 8Gi, 500Mi): with --from, in all; from a cluster, in one answer of the API server (at most 1Gi) and one watch event (at most 64Mi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--journal', '--journal', [CompletionResultType]::ParameterName, 'The migration journal: an SQLite file, or postgres://USER@HOST/DB (default: $VMCTL_JOURNAL, else $XDG_STATE_HOME/vmctl/journal.sqlite or ~/.local/state/vmctl/journal.sqlite). `record`, `migrate`, `drain` and `abort` write to it (`off`: they do not); `history` and `explain` read it')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Look in every namespace')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'vmctl;help' {
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'What is going on with my VMs: node, phase, eviction strategy, migratability, evacuation and migrations, then the migrations in flight')
            [CompletionResult]::new('plan-drain', 'plan-drain', [CompletionResultType]::ParameterValue, 'Predict, before anything is cordoned, what draining a node will do to every VM')
            [CompletionResult]::new('plan-maintenance', 'plan-maintenance', [CompletionResultType]::ParameterValue, 'Predict a rolling maintenance (every node drained in turn): batches, time, how often each VM migrates, shutdowns, the first blocker; the default order next to a better one')
            [CompletionResult]::new('drain', 'drain', [CompletionResultType]::ParameterValue, 'Drain node(s): the plan first, then cordon, evict like kubectl drain, follow every VM''s evacuation live, stop with a diagnosis where a VM cannot leave')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Diagnose a migration: which plane failed, why, the evidence, and what to do')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Start a live migration and follow it: through KubeVirt (a VM or VMI), or directly through libvirt (--connect SRC --to DST)')
            [CompletionResult]::new('abort', 'abort', [CompletionResultType]::ParameterValue, 'Abort a migration in flight (refused in post-copy: the guest''s state is split)')
            [CompletionResult]::new('snapshot', 'snapshot', [CompletionResultType]::ParameterValue, 'Capture every object vmctl reads into one file that --from reads back')
            [CompletionResult]::new('top', 'top', [CompletionResultType]::ParameterValue, 'A live full-screen console: migrations in flight (post-copy marked), drains and evacuations, recent failures; keys to explain, abort (refused in post-copy), filter')
            [CompletionResult]::new('record', 'record', [CompletionResultType]::ParameterValue, 'Watch the cluster and write every migration''s end to the journal (--journal), with its diagnosis, timeline and durations; runs until stopped (deploy/record.yaml in-cluster)')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'Migrations from the journal: what failed, why, how long, per node and per cause')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Write the man pages')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'vmctl;help;status' {
            break
        }
        'vmctl;help;plan-drain' {
            break
        }
        'vmctl;help;plan-maintenance' {
            break
        }
        'vmctl;help;drain' {
            break
        }
        'vmctl;help;explain' {
            break
        }
        'vmctl;help;migrate' {
            break
        }
        'vmctl;help;abort' {
            break
        }
        'vmctl;help;snapshot' {
            break
        }
        'vmctl;help;top' {
            break
        }
        'vmctl;help;record' {
            break
        }
        'vmctl;help;history' {
            break
        }
        'vmctl;help;completions' {
            break
        }
        'vmctl;help;man' {
            break
        }
        'vmctl;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
