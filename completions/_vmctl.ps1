
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
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
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
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Diagnose a migration: which plane failed, why, the evidence, and what to do')
            [CompletionResult]::new('snapshot', 'snapshot', [CompletionResultType]::ParameterValue, 'Capture every object vmctl reads into one file that --from reads back')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Write the man pages')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'vmctl;status' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'Only VMIs running on this node')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only VMIs whose labels match this selector (e.g. app=db,tier!=web)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only VMIs whose labels match this selector (e.g. app=db,tier!=web)')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
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
        'vmctl;plan-drain' {
            [CompletionResult]::new('--bandwidth', '--bandwidth', [CompletionResultType]::ParameterName, 'Transfer rate assumed per migration when the cluster sets no bandwidthPerMigration (a quantity per second, e.g. 1Gi, 500Mi)')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
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
        'vmctl;explain' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate as if the time were this RFC 3339 instant (reproducible output)')
            [CompletionResult]::new('--history', '--history', [CompletionResultType]::ParameterName, 'List every migration of the VMI still present, oldest first, with the backoff between them')
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
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'Only what concerns the VMIs on this node (plus every node, for capacity)')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
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
        'vmctl;completions' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read objects from a snapshot file or directory instead of a cluster (kubectl get -o yaml|json output, Lists, multi-document YAML, vmctl snapshot files, must-gather style directories)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
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
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace scope (default: the context''s namespace; all namespaces with --from)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Seconds to wait for each API request')
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
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Diagnose a migration: which plane failed, why, the evidence, and what to do')
            [CompletionResult]::new('snapshot', 'snapshot', [CompletionResultType]::ParameterValue, 'Capture every object vmctl reads into one file that --from reads back')
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
        'vmctl;help;explain' {
            break
        }
        'vmctl;help;snapshot' {
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
