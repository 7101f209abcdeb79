package io.strand.tools;

import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code strand completion bash|zsh}: picocli's completion script for the whole command tree. */
@Command(name = "completion", mixinStandardHelpOptions = true,
        description = "Print a shell completion script.",
        footer = {"", "Examples:", "  strand completion bash > /etc/bash_completion.d/strand",
                "  source <(strand completion bash)             this shell",
                "  source <(strand completion zsh)              zsh (uses bashcompinit)"})
final class CompletionCommand implements Callable<Integer> {
    enum Shell { bash, zsh }

    @Spec
    CommandSpec spec;
    @Parameters(index = "0", paramLabel = "SHELL", description = "bash or zsh.")
    Shell shell;

    @Override
    public Integer call() {
        String script = AutoComplete.bash("strand", StrandCli.commandLine());
        if (shell == Shell.zsh) {
            script = "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n" + script;
        }
        spec.commandLine().getOut().print(script);
        spec.commandLine().getOut().flush();
        return 0;
    }
}
