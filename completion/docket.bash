# SPDX-License-Identifier: Apache-2.0
# bash completion for docket: commands, their options and a few option
# values. Commands and options are read from the program's own --help, so
# the completion cannot drift from it (installed as
# share/bash-completion/completions/docket; tests/install/completion_test.sh).
# shellcheck disable=SC2207  # COMPREPLY=($(compgen ...)) is the completion idiom

# _docket_help DOCKET [COMMAND]: the help text, without colour
_docket_help() {
	NO_COLOR=1 command "$@" --help 2>/dev/null
}

# the command names of `docket --help`
_docket_commands() {
	_docket_help "$1" | awk '/^commands:/{f=1;next} f&&/^$/{exit} f{print $1}'
}

# "option[=]" for each option of `docket COMMAND --help` ("=" when it takes a value)
_docket_options() {
	_docket_help "$1" "$2" | awk '
		/^options:/{f=1;next} f&&/^$/{f=0}
		f&&/^ +-/{
			sub(/^ +/, ""); split($0, a, "  ")
			n = split(a[1], t, /, /)
			v = split(t[n], x, " ") > 1 ? "=" : ""
			for (i = 1; i <= n; i++) { split(t[i], w, " "); print w[1] v }
		}'
}

_docket() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local docket=${COMP_WORDS[0]} cmd='' at=0 i opts o values=''
	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-L|--ledger) ((i++)) ;;
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; at=$i; break ;;
		esac
	done

	if [ -z "$cmd" ]; then
		case $prev in
		-L|--ledger) COMPREPLY=($(compgen -d -- "$cur")) ;;
		*) if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-L --ledger -h --help --version" -- "$cur"))
		   else
			COMPREPLY=($(compgen -W "$(_docket_commands "$docket")" -- "$cur"))
		   fi ;;
		esac
		return 0
	fi

	# option values docket knows
	case $cmd:$prev in
	export:-f|export:--format) values="jsonl ocsf otel csv git" ;;
	replay:-f|replay:--format) values="table json junit markdown" ;;
	replay:--approvals) values="recorded none" ;;
	replay:--fail-on) values="loosened tightened changed" ;;
	policy:--to) values="docket" ;;
	esac
	if [ -z "$values" ] && [ "$COMP_CWORD" -eq $((at + 1)) ]; then
		case $cmd in
		help) values=$(_docket_commands "$docket") ;;
		import) [[ $cur == -* ]] || values="codex claude" ;;
		policy) [[ $cur == -* ]] || values="check eval explain convert" ;;
		esac
	fi
	if [ -n "$values" ]; then
		COMPREPLY=($(compgen -W "$values" -- "$cur"))
		return 0
	fi

	opts=$(_docket_options "$docket" "$cmd")
	for o in $opts; do
		if [ "${o%=}" = "$prev" ] && [ "$o" != "$prev" ]; then
			# an option that takes a value: a file name
			COMPREPLY=($(compgen -f -- "$cur"))
			compopt -o filenames 2>/dev/null
			return 0
		fi
	done
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${opts//=/}" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
	fi
	return 0
}
complete -F _docket docket
