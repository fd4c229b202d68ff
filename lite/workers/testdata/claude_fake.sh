#!/bin/sh
# A stand-in for Claude Code's headless CLI in the workers tests: it
# prints the stream-json shapes `claude -p --output-format stream-json
# --verbose` prints (system/init, assistant text and tool_use, user
# tool_result, result), chosen by the prompt on stdin. Sessions are files
# under $HOME/.claude, so --resume works across runs.
printf '%s\n' "$@" > "$HOME/args.txt"
resume=""
format=""
while [ $# -gt 0 ]; do
	case "$1" in
	--resume) resume="$2"; shift ;;
	--output-format) format="$2"; shift ;;
	esac
	shift
done
prompt=$(cat)
mkdir -p "$HOME/.claude"
sid="0f6c1b4e-6a43-4c55-9d2e-7a1c9e0b5d21"
if [ -n "$resume" ]; then
	if [ ! -f "$HOME/.claude/$resume" ]; then
		echo "No conversation found with session ID: $resume" >&2
		exit 1
	fi
	sid="$resume"
fi
touch "$HOME/.claude/$sid"
result() { # subtype is_error text denials
	printf '{"type":"result","subtype":"%s","is_error":%s,"duration_ms":2310,"duration_api_ms":2100,"num_turns":3,"result":"%s","session_id":"%s","total_cost_usd":0.0123,"usage":{"input_tokens":12,"output_tokens":40},"permission_denials":%s}\n' "$1" "$2" "$3" "$sid" "$4"
}
if [ "$format" = "json" ]; then
	result success false "one object" "[]"
	exit 0
fi
printf '{"type":"system","subtype":"init","cwd":"%s","session_id":"%s","tools":["Bash","Edit","Read"],"mcp_servers":[],"model":"claude-sonnet-4-5","permissionMode":"default","apiKeySource":"ANTHROPIC_API_KEY"}\n' "$PWD" "$sid"
case "$prompt" in
hello)
	printf '{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Let me look."}],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":5}},"parent_tool_use_id":null,"session_id":"%s"}\n' "$sid"
	printf '{"type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la","description":"List files"}}],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":5}},"parent_tool_use_id":null,"session_id":"%s"}\n' "$sid"
	printf '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"total 0","is_error":false}]},"parent_tool_use_id":null,"session_id":"%s"}\n' "$sid"
	echo "made by claude" > made.txt
	result success false "All done: made.txt written." "[]"
	;;
again)
	result success false "resumed $sid" "[]"
	;;
denied)
	result success false "I could not clean up." '[{"tool_name":"Bash","tool_use_id":"toolu_9","tool_input":{"command":"rm -rf build"}}]'
	;;
turns)
	result error_max_turns true "" "[]"
	;;
fail)
	result error_during_execution true "Invalid API key · Please run /login" "[]"
	;;
hang)
	printf '{"type":"assistant","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"make slow"}}],"stop_reason":null},"parent_tool_use_id":null,"session_id":"%s"}\n' "$sid"
	exec sleep 1000
	;;
garbage)
	i=0
	while [ $i -lt 100 ]; do echo "not json $i"; i=$((i+1)); done
	;;
silent)
	echo "claude: something broke" >&2
	exit 1
	;;
esac
