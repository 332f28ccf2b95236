
use builtin;
use str;

set edit:completion:arg-completer[vmctl] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'vmctl'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'vmctl'= {
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand status 'What is going on with my VMs: node, phase, eviction strategy, migratability, evacuation and migrations, then the migrations in flight'
            cand plan-drain 'Predict, before anything is cordoned, what draining a node will do to every VM'
            cand plan-maintenance 'Predict a rolling maintenance (every node drained in turn): batches, time, how often each VM migrates, shutdowns, the first blocker; the default order next to a better one'
            cand drain 'Drain node(s): the plan first, then cordon, evict like kubectl drain, follow every VM''s evacuation live, stop with a diagnosis where a VM cannot leave'
            cand explain 'Diagnose a migration: which plane failed, why, the evidence, and what to do'
            cand migrate 'Start a live migration and follow it: through KubeVirt (a VM or VMI), or directly through libvirt (--connect SRC --to DST)'
            cand abort 'Abort a migration in flight (refused in post-copy: the guest''s state is split)'
            cand snapshot 'Capture every object vmctl reads into one file that --from reads back'
            cand completions 'Print a shell completion script'
            cand man 'Write the man pages'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'vmctl;status'= {
            cand --node 'Only VMIs running on this node'
            cand -l 'Only VMIs whose labels match this selector (e.g. app=db,tier!=web)'
            cand --selector 'Only VMIs whose labels match this selector (e.g. app=db,tier!=web)'
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand -w 'Keep watching: a live view of the migrations in flight, fed by watches'
            cand --watch 'Keep watching: a live view of the migrations in flight, fed by watches'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'vmctl;plan-drain'= {
            cand --bandwidth 'Transfer rate assumed per migration when the cluster sets no bandwidthPerMigration (a quantity per second, e.g. 1Gi, 500Mi)'
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'vmctl;plan-maintenance'= {
            cand -l 'The nodes these labels select, by name'
            cand --selector 'The nodes these labels select, by name'
            cand --max-unavailable 'Nodes drained at once (a MachineConfigPool''s maxUnavailable)'
            cand --order 'order'
            cand --targets 'targets'
            cand --upgrade-time 'Time to upgrade and reboot a drained node before it takes VMs again (e.g. 10m)'
            cand --bandwidth 'Transfer rate assumed per migration (as plan-drain --bandwidth)'
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand --all 'Every node of the cluster, by name'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'vmctl;drain'= {
            cand --timeout 'Stop waiting after this long (e.g. 30m); 0 or absent: no limit, like kubectl drain. Migrations in flight go on (KubeVirt owns them)'
            cand --pod-selector 'Only evict the pods these labels select (as kubectl drain --pod-selector)'
            cand --grace-period 'Seconds each pod gets to terminate (the pod''s own when absent, as kubectl''s -1)'
            cand --max-parallel 'At most this many VMs evacuated at once (KubeVirt''s own limits apply on top)'
            cand --bandwidth 'Transfer rate assumed per migration in the plan (as plan-drain --bandwidth)'
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand --dry-run 'Show the plan and what would be done; change nothing'
            cand --ignore-daemonsets 'Leave DaemonSet-managed pods (as kubectl drain --ignore-daemonsets)'
            cand --delete-emptydir-data 'Evict pods with emptyDir volumes, losing their data (as kubectl drain). A VM''s launcher pod does not need it: the VM moves by live migration'
            cand --force 'Evict pods that no controller owns (as kubectl drain --force)'
            cand --allow-shutdowns 'Allow shutting down the VMs the plan shuts down (eviction strategy None, or not migratable with LiveMigrateIfPossible). Without it vmctl asks on a terminal and refuses elsewhere'
            cand --force-partial 'Drain even when the plan says it will block: everything that can leave leaves, the blockers are listed at the end'
            cand --no-wait 'Return once every eviction was accepted or handed to KubeVirt; do not wait for the VMs to arrive (follow with vmctl status --watch)'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'vmctl;explain'= {
            cand --connect 'Explain the last migration job of a libvirt domain on this libvirt URI instead'
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand --history 'List every migration of the VMI still present, oldest first, with the backoff between them'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'vmctl;migrate'= {
            cand --node-selector 'Restrict the target to nodes with these labels (KubeVirt: addedNodeSelector), k=v,...'
            cand --timeout 'Give up waiting after this long (e.g. 90s, 15m); the migration itself goes on. With --connect (vmctl drives the migration) it is aborted instead, unless in post-copy'
            cand --prometheus 'Read migration metrics from this Prometheus instead of virt-handler''s pod proxy'
            cand --connect 'libvirt: the source connection URI (e.g. qemu+ssh://host-a/system)'
            cand --to 'libvirt: the destination connection URI'
            cand --bandwidth 'libvirt: bandwidth cap in MiB/s (1 to 1048576)'
            cand --postcopy-bandwidth 'libvirt: bandwidth cap in post-copy, MiB/s (1 to 1048576; needs --allow-postcopy; unlimited without it)'
            cand --max-downtime 'libvirt: maximum downtime in milliseconds (1 to 2000000, KubeVirt''s range)'
            cand --completion-timeout-per-gib 'libvirt: completion budget per GiB of guest memory, in seconds (KubeVirt''s default 150; 0 disables it; at most 86400)'
            cand --progress-timeout 'libvirt: abort when remaining data has not decreased for this many seconds (default 150; 0 disables it; at most 86400)'
            cand --parallel 'libvirt: parallel (multifd) connections (1 to 255)'
            cand --progress 'libvirt: `json` prints one JSON line per sample on stdout, for tooling'
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand --allow-postcopy 'Allow switching to post-copy when pre-copy does not converge. After the switch the guest runs on the target with memory still on the source: an abort or a network failure then loses the guest'
            cand --allow-auto-converge 'Allow auto-converge: throttle the guest''s CPUs until pre-copy converges'
            cand --dry-run 'Print what would be created (or the libvirt flags and parameters) and change nothing'
            cand --wait 'Follow the migration until it ends (the default)'
            cand --no-wait 'Start the migration and return at once'
            cand --allow-pause 'libvirt: pause the guest when pre-copy cannot converge and post-copy is not allowed'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'vmctl;abort'= {
            cand --timeout 'Give up waiting after this long (e.g. 60s)'
            cand --connect 'libvirt: the connection URI of the domain''s source host'
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand --evacuation 'Cancel a drain-triggered evacuation instead (clears evacuationNodeName)'
            cand --wait 'Wait for the abort to be reported (the default for libvirt)'
            cand --dry-run 'Print what would be deleted or called and change nothing'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'vmctl;snapshot'= {
            cand --node 'Only what concerns the VMIs on this node (plus every node, for capacity)'
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'vmctl;completions'= {
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'vmctl;man'= {
            cand --dir 'Directory to write vmctl.1 and one page per command into; stdout (vmctl.1 only) when absent'
            cand --from 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)'
            cand --max-input-size 'With --from: the most vmctl reads, in all (a quantity: 2Gi, 8Gi, 500Mi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use'
            cand -n 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand --namespace 'Namespace scope (default: the context''s namespace; all namespaces with --from)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --request-timeout 'Seconds to wait for each API request'
            cand --now 'Evaluate as if the time were this RFC 3339 instant (reproducible output)'
            cand -A 'Look in every namespace'
            cand --all-namespaces 'Look in every namespace'
            cand --no-color 'Never colour the output (colour is also off when stdout is not a terminal or NO_COLOR is set)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'vmctl;help'= {
            cand status 'What is going on with my VMs: node, phase, eviction strategy, migratability, evacuation and migrations, then the migrations in flight'
            cand plan-drain 'Predict, before anything is cordoned, what draining a node will do to every VM'
            cand plan-maintenance 'Predict a rolling maintenance (every node drained in turn): batches, time, how often each VM migrates, shutdowns, the first blocker; the default order next to a better one'
            cand drain 'Drain node(s): the plan first, then cordon, evict like kubectl drain, follow every VM''s evacuation live, stop with a diagnosis where a VM cannot leave'
            cand explain 'Diagnose a migration: which plane failed, why, the evidence, and what to do'
            cand migrate 'Start a live migration and follow it: through KubeVirt (a VM or VMI), or directly through libvirt (--connect SRC --to DST)'
            cand abort 'Abort a migration in flight (refused in post-copy: the guest''s state is split)'
            cand snapshot 'Capture every object vmctl reads into one file that --from reads back'
            cand completions 'Print a shell completion script'
            cand man 'Write the man pages'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'vmctl;help;status'= {
        }
        &'vmctl;help;plan-drain'= {
        }
        &'vmctl;help;plan-maintenance'= {
        }
        &'vmctl;help;drain'= {
        }
        &'vmctl;help;explain'= {
        }
        &'vmctl;help;migrate'= {
        }
        &'vmctl;help;abort'= {
        }
        &'vmctl;help;snapshot'= {
        }
        &'vmctl;help;completions'= {
        }
        &'vmctl;help;man'= {
        }
        &'vmctl;help;help'= {
        }
    ]
    $completions[$command]
}
