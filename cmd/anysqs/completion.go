package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/anysqs/anysqs/internal/cli"
	"github.com/anysqs/anysqs/internal/mq"
)

// The scripts complete command names from the table at generation time and flags by
// asking the binary itself (`anysqs CMD --help`), so they never go stale for flags.
const bashCompletion = `# anysqs completion for bash: source <(anysqs completion bash)
_anysqs() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmds="%[1]s" mq="%[2]s"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$cmds help" -- "$cur")); return
	fi
	local cmd=${COMP_WORDS[1]}
	if [ "$cmd" = mq ] && [ "$COMP_CWORD" -eq 2 ]; then
		COMPREPLY=($(compgen -W "$mq" -- "$cur")); return
	fi
	if [ "$cmd" = help ]; then
		COMPREPLY=($(compgen -W "$cmds" -- "$cur")); return
	fi
	if [ "$cmd" = completion ]; then
		COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")); return
	fi
	case $cur in
	-*)
		local sub=; [ "$cmd" = mq ] && sub=${COMP_WORDS[2]}
		local flags=$("${COMP_WORDS[0]}" $cmd $sub --help 2>/dev/null | sed -n 's/^  \(--*[a-z0-9-]*\).*/\1/p')
		COMPREPLY=($(compgen -W "$flags" -- "$cur"));;
	*)
		COMPREPLY=($(compgen -f -- "$cur"));;
	esac
}
complete -F _anysqs anysqs
`

const zshCompletion = `#compdef anysqs
# anysqs completion for zsh: source <(anysqs completion zsh)
autoload -U +X bashcompinit && bashcompinit
`

const fishCompletion = `# anysqs completion for fish: anysqs completion fish | source
complete -c anysqs -f -n __fish_use_subcommand -a "%[1]s help"
complete -c anysqs -f -n "__fish_seen_subcommand_from mq" -a "%[2]s"
complete -c anysqs -f -n "__fish_seen_subcommand_from completion" -a "bash zsh fish"
`

func runCompletion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("completion", "bash|zsh|fish", `Print a shell completion script. Load it with
  bash:  source <(anysqs completion bash)      (or save it in /etc/bash_completion.d/anysqs)
  zsh:   source <(anysqs completion zsh)
  fish:  anysqs completion fish | source`)
	if err := fs.ParseArgs(args, stdout); err != nil {
		return err
	}
	cmds, subs := commandNames(), mq.CommandNames()
	cmds = strings.ReplaceAll(cmds, ", ", " ")
	switch fs.Arg(0) {
	case "bash":
		fmt.Fprintf(stdout, bashCompletion, cmds, subs)
	case "zsh":
		fmt.Fprint(stdout, zshCompletion)
		fmt.Fprintf(stdout, bashCompletion, cmds, subs)
	case "fish":
		fmt.Fprintf(stdout, fishCompletion, cmds, subs)
	case "":
		return cli.Usagef("completion: name a shell: bash, zsh or fish")
	default:
		return cli.Usagef("completion: unknown shell %q; want bash, zsh or fish", fs.Arg(0))
	}
	return nil
}
