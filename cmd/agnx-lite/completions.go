package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// flagsWithValue are the global flags that take a value (a path), so a
// completion script skips the word after them when looking for the command.
const flagsWithValue = "-c --config -d --data-dir --agents-dir"

// globalFlagWords are the global flags a completion offers.
const globalFlagWords = "-c --config -d --data-dir --agents-dir -v --verbose -q --quiet -h --help"

func runCompletions(g *globals, args []string) error {
	fs := g.flags("completions")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("name the shell: bash, zsh or fish")
	}
	cmds := commands()
	switch fs.Arg(0) {
	case "bash":
		writeBash(g.stdout, cmds)
	case "zsh":
		writeZsh(g.stdout, cmds)
	case "fish":
		writeFish(g.stdout, cmds)
	default:
		return usagef("unknown shell %q: bash, zsh or fish", fs.Arg(0))
	}
	return nil
}

func sortedNames(cmds map[string]command) []string {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// subsOf is what may follow name: its subcommands, or for help the commands.
func subsOf(name string, cmds map[string]command) []string {
	if name == "help" {
		return sortedNames(cmds)
	}
	return cmds[name].subs
}

// quote puts s in single quotes for a shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func writeBash(w io.Writer, cmds map[string]command) {
	names := sortedNames(cmds)
	fmt.Fprintf(w, `# bash completion for agnx-lite: source <(agnx-lite completions bash)
_agnx_lite() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    local globals=%s
    case " %s " in *" $prev "*) COMPREPLY=( $(compgen -f -- "$cur") ); return ;; esac
    local i cmd=""
    for (( i = 1; i < COMP_CWORD; i++ )); do
        case " %s " in
            *" ${COMP_WORDS[i]} "*) (( i++ )) ;;
            *) [[ ${COMP_WORDS[i]} == -* ]] || { cmd=${COMP_WORDS[i]}; break; } ;;
        esac
    done
    if [[ $cur == -* ]]; then
        local flags=$globals
        case $cmd in
`, quote(globalFlagWords), flagsWithValue, flagsWithValue)
	flags := commandFlags(cmds)
	for _, n := range names {
		if len(flags[n]) > 0 {
			fmt.Fprintf(w, "            %s) flags+=%s ;;\n", n, quote(" "+flagWords(flags[n], false)))
		}
	}
	fmt.Fprintf(w, `        esac
        COMPREPLY=( $(compgen -W "$flags" -- "$cur") ); return
    fi
    if [[ -z $cmd ]]; then COMPREPLY=( $(compgen -W %s -- "$cur") ); return; fi
    local subs=""
    case $cmd in
`, quote(strings.Join(names, " ")))
	for _, n := range names {
		if s := subsOf(n, cmds); len(s) > 0 {
			fmt.Fprintf(w, "        %s) subs=%s ;;\n", n, quote(strings.Join(s, " ")))
		}
	}
	fmt.Fprint(w, `    esac
    if [[ -n $subs ]] && (( i + 1 == COMP_CWORD )); then COMPREPLY=( $(compgen -W "$subs" -- "$cur") ); return; fi
    COMPREPLY=( $(compgen -f -- "$cur") )
}
complete -o filenames -F _agnx_lite agnx-lite
`)
}

func writeZsh(w io.Writer, cmds map[string]command) {
	names := sortedNames(cmds)
	fmt.Fprint(w, "#compdef agnx-lite\n# zsh completion for agnx-lite: agnx-lite completions zsh > \"${fpath[1]}/_agnx-lite\"\n")
	fmt.Fprint(w, "_agnx-lite() {\n    local -a cmds subs\n    cmds=(\n")
	for _, n := range names {
		fmt.Fprintf(w, "        %s\n", quote(n+":"+cmds[n].short))
	}
	fmt.Fprintf(w, `    )
    local i cmd=""
    for (( i = 2; i < CURRENT; i++ )); do
        case " %s " in
            *" ${words[i]} "*) (( i++ )) ;;
            *) [[ ${words[i]} == -* ]] || { cmd=${words[i]}; break; } ;;
        esac
    done
    if [[ $PREFIX == -* ]]; then
        local -a flags
        flags=(${=:-%s})
        case $cmd in
`, flagsWithValue, globalFlagWords)
	flags := commandFlags(cmds)
	for _, n := range names {
		if len(flags[n]) > 0 {
			fmt.Fprintf(w, "            %s) flags+=(%s) ;;\n", n, flagWords(flags[n], false))
		}
	}
	fmt.Fprint(w, `        esac
        compadd -- $flags; return
    fi
    if [[ -z $cmd ]]; then _describe 'command' cmds; return; fi
    case $cmd in
`)
	for _, n := range names {
		if s := subsOf(n, cmds); len(s) > 0 {
			fmt.Fprintf(w, "        %s) subs=(%s) ;;\n", n, strings.Join(s, " "))
		}
	}
	fmt.Fprint(w, `    esac
    if (( ${#subs} )) && (( i + 1 == CURRENT )); then compadd -- $subs; return; fi
    _files
}
if [[ ${funcstack[1]} == _agnx-lite ]]; then _agnx-lite "$@"; else compdef _agnx-lite agnx-lite; fi
`)
}

func writeFish(w io.Writer, cmds map[string]command) {
	names := sortedNames(cmds)
	fmt.Fprint(w, "# fish completion for agnx-lite: agnx-lite completions fish > ~/.config/fish/completions/agnx-lite.fish\n")
	fmt.Fprint(w, "complete -c agnx-lite -f\n")
	fmt.Fprint(w, "complete -c agnx-lite -s c -l config -r -F -d 'agnx.yaml or duragent.yaml'\n")
	fmt.Fprint(w, "complete -c agnx-lite -s d -l data-dir -r -F -d 'data directory'\n")
	fmt.Fprint(w, "complete -c agnx-lite -l agents-dir -r -F -d 'folder of agents'\n")
	fmt.Fprint(w, "complete -c agnx-lite -s v -l verbose -d 'more log output'\n")
	fmt.Fprint(w, "complete -c agnx-lite -s q -l quiet -d 'only errors'\n")
	fmt.Fprint(w, "complete -c agnx-lite -s h -l help -d 'show help'\n")
	for _, n := range names {
		fmt.Fprintf(w, "complete -c agnx-lite -n __fish_use_subcommand -a %s -d %s\n", n, quote(cmds[n].short))
	}
	flags := commandFlags(cmds)
	for _, n := range names {
		for _, f := range flags[n] {
			spec := "-l " + f.long
			if f.short != "" {
				spec = "-s " + f.short + " " + spec
			}
			if f.value {
				spec += " -r"
			}
			fmt.Fprintf(w, "complete -c agnx-lite -n %s %s -d %s\n", quote("__fish_seen_subcommand_from "+n), spec, quote(f.usage))
		}
	}
	for _, n := range names {
		s := subsOf(n, cmds)
		if len(s) == 0 {
			continue
		}
		words := strings.Join(s, " ")
		fmt.Fprintf(w, "complete -c agnx-lite -n %s -a %s\n",
			quote("__fish_seen_subcommand_from "+n+"; and not __fish_seen_subcommand_from "+words), quote(words))
	}
}
