# shellcheck shell=bash disable=SC2034,SC2154
# What scripts/bench.sh and the other bench-*.sh share, sourced by each: two
# network namespaces joined by a veth pair, each side pinned to a CPU and its veth end
# steering what it receives there (RPS), an iwxd in each (daemons_up), and the helpers
# that stop processes, read result lines and make Markdown tables of medians; and the
# cleanup on exit (trapped when sourced). The caller sets server and out (empty) and an
# array made_ns (the namespaces the cleanup deletes); before net_up, ns_a ns_b if_a if_b
# addr_a addr_b (net_names sets them), pin and rps (1 or 0), rfs (1, or unset: 0); and a
# die function.

# The script's comment at its top, from line 2 to its "set -euo" line.
usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
	exit "${1:-0}"
}

# The options both scripts take, first of the arguments left: -n RUNS, -t SECONDS,
# --no-pin, --no-rps, --rfs, -h; anything else is a usage error. $took: how many it took.
common_arg() {
	took=1
	case $1 in
	-n) runs=${2:-}; took=2 ;;
	-t) secs=${2:-}; took=2 ;;
	--no-pin) pin=0 ;;
	--no-rps) rps=0 ;;
	--rfs) rfs=1 ;;
	-h | --help) usage 0 ;;
	*) usage 2 >&2 ;;
	esac
	[ $# -ge "$took" ] || usage 2 >&2
}

# On any exit: the server running ($server), what the caller's cleanup_extra stops (when
# it defines one), the namespaces and the temporary directory; the script's status kept.
cleanup() {
	local st=$? ns

	trap - EXIT INT TERM
	[ -n "${server:-}" ] && stop_pid "$server"
	if declare -F cleanup_extra >/dev/null; then cleanup_extra || true; fi
	for ns in ${made_ns[@]+"${made_ns[@]}"}; do ip netns del "$ns" 2>/dev/null || true; done
	[ -z "${rfs_was:-}" ] || sysctl -qw net.core.rps_sock_flow_entries="$rfs_was" || true
	if [ -n "${out:-}" ]; then rm -rf "$out"; fi
	exit "$st"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stop_pid() { # pid: TERM, up to 5 s, then KILL
	kill "$1" 2>/dev/null || return 0
	for _ in $(seq 50); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# The names net_up uses, this script's own (prefix: two to five letters, and its PID):
# namespaces PREFIX-PID-a and -b, the veth ends PREFIXPIDa and b, 192.0.2.1 and .2.
net_names() { # prefix
	ns_a=$1-$$-a ns_b=$1-$$-b
	if_a=$1$$a if_b=$1$$b
	addr_a=192.0.2.1 addr_b=192.0.2.2
}

# The namespaces and the veth pair, up; pin_a and pin_b: the commands that pin a program to
# namespace a's CPU (0) and b's (1), empty when not pinned (--no-pin, one CPU, no taskset).
net_up() {
	pin_a=() pin_b=()
	if [ "$pin" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
		pin_a=(taskset -c 0) pin_b=(taskset -c 1)
	fi
	ip netns add "$ns_a"
	made_ns+=("$ns_a")
	ip netns add "$ns_b"
	made_ns+=("$ns_b")
	ip link add "$if_a" netns "$ns_a" type veth peer name "$if_b" netns "$ns_b"
	ip -n "$ns_a" addr add "$addr_a/24" dev "$if_a"
	ip -n "$ns_b" addr add "$addr_b/24" dev "$if_b"
	ip -n "$ns_a" link set lo up
	ip -n "$ns_b" link set lo up
	ip -n "$ns_a" link set "$if_a" up
	ip -n "$ns_b" link set "$if_b" up
	if [ "${rfs:-0}" = 1 ]; then
		# each end's receiving on the CPU where the flow's reader last ran (RFS); the
		# table is the machine's, put back as it was on exit (cleanup)
		rfs_was=$(sysctl -n net.core.rps_sock_flow_entries)
		sysctl -qw net.core.rps_sock_flow_entries=32768
		local x
		for x in "$ns_a:$if_a" "$ns_b:$if_b"; do
			ip netns exec "${x%%:*}" sh -c "q=/sys/class/net/${x#*:}/queues/rx-0 &&
				printf %x $(((1 << $(nproc)) - 1)) > \$q/rps_cpus &&
				echo 32768 > \$q/rps_flow_cnt"
		done
	elif [ ${#pin_a[@]} -gt 0 ] && [ "$rps" = 1 ]; then
		# each end's receiving on its namespace's CPU (masks: CPU 0, CPU 1)
		ip netns exec "$ns_a" sh -c "echo 1 > /sys/class/net/$if_a/queues/rx-0/rps_cpus"
		ip netns exec "$ns_b" sh -c "echo 2 > /sys/class/net/$if_b/queues/rx-0/rps_cpus"
	fi
}
# Delete what net_up made (the veth pair goes with the namespaces), for a fresh net_up.
net_down() {
	ip netns del "$ns_a"
	ip netns del "$ns_b"
	made_ns=()
}
in_a() { ip netns exec "$ns_a" "${pin_a[@]}" "$@"; }
in_b() { ip netns exec "$ns_b" "${pin_b[@]}" "$@"; }
# ", each receiving there (RPS)" when steered, else nothing (and status 0: set -e)
steer_note() {
	if [ "${rfs:-0}" = 1 ]; then echo ", each receiving where its reader runs (RFS)"
	elif [ ${#pin_a[@]} -gt 0 ] && [ "$rps" = 1 ]; then echo ", each receiving there (RPS)"; fi
}

# Start a server in ns b, bounded by $limit seconds (default: secs + 60); its pid
# (timeout's, which passes signals on) in $server until it is waited for (stop_server).
# Not through a subshell: $! is then ip's, which execs into taskset and timeout.
start_server() {
	ip netns exec "$ns_b" "${pin_b[@]}" timeout "${limit:-$((secs + 60))}" "$@" >"$out/server.log" 2>&1 &
	server=$!
}

stop_server() { # what: the server's exit, its log shown when it failed
	local st=0

	wait "$server" || st=$?
	server=
	[ "$st" -eq 0 ] || { sed 's/^/  server: /' "$out/server.log" >&2; die "$1: the server failed"; }
}

client_failed() { # what: the client's log and the server's (stopped), the daemons' if any
	sed 's/^/  client: /' "$out/client.log" >&2
	stop_pid "$server"
	server=
	sed 's/^/  server: /' "$out/server.log" >&2
	[ -z "${daemons[*]:-}" ] || daemon_logs
	die "$1: the client failed"
}

wait_listen() { # port [ss filter: -Hltn (TCP, the default) or -Hlun (UDP)]
	for _ in $(seq 50); do
		[ -n "$(ip netns exec "$ns_b" ss "${2:--Hltn}" "sport = :$1")" ] && return 0
		sleep 0.1
	done
	die "nothing listens on port $1 in $ns_b after 5 s"
}

# ------------------------------------------------------------- the daemons

# An iwxd in each namespace, pinned as its namespace is, started with -s SOCKET -v and
# options, serving when this returns: sock_a and sock_b, pid_a and pid_b (also in the
# caller's array daemons, which daemons_down, in its cleanup_extra, stops). Its log in
# $out/iwxd-a.log and -b.log. The caller sets iwxd, the daemon's path.
daemons_up() { # options...
	sock_a=$out/iwxd-a.sock sock_b=$out/iwxd-b.sock
	# not through in_a/in_b, whose subshell $! would name: ip netns exec and taskset exec,
	# so the PID started is iwxd's own
	ip netns exec "$ns_a" "${pin_a[@]}" "$iwxd" -s "$sock_a" -v "$@" >"$out/iwxd-a.log" 2>&1 &
	pid_a=$!
	daemons+=("$pid_a")
	ip netns exec "$ns_b" "${pin_b[@]}" "$iwxd" -s "$sock_b" -v "$@" >"$out/iwxd-b.log" 2>&1 &
	pid_b=$!
	daemons+=("$pid_b")
	wait_daemon "$ns_a" "$sock_a" "$pid_a"
	wait_daemon "$ns_b" "$sock_b" "$pid_b"
	if [ "$(cat /proc/"$pid_a"/comm)" != iwxd ] || [ "$(cat /proc/"$pid_b"/comm)" != iwxd ]; then
		die "the daemons' PIDs are not iwxd's"
	fi
}

daemons_down() {
	local pid

	for pid in ${daemons[@]+"${daemons[@]}"}; do stop_pid "$pid"; done
	daemons=()
}

daemon_logs() { for x in a b; do sed "s/^/  iwxd-$x: /" "$out/iwxd-$x.log" | tail -20 >&2; done; }

wait_daemon() { # namespace socket pid
	for _ in $(seq 50); do
		kill -0 "$3" 2>/dev/null || { daemon_logs; die "iwxd in $1 exited"; }
		ip netns exec "$1" ss -Hxl | grep -qF "$2" && return 0
		sleep 0.1
	done
	daemon_logs
	die "iwxd in $1 does not serve $2 after 5 s"
}

ticks() { # pid: CPU time used so far, in clock ticks
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

now_ns() { date +%s%N; }

# The receiver's fast path counters (iwx stats -j), its interfaces summed: placed bytes,
# then FPDUs placed and skipped (%.0f: mawk's %d stops at 2^31 - 1, a few seconds of placing).
fp_placed() { # socket (the caller sets iwx, the CLI's path)
	timeout 10 "$iwx" stats -j -s "$1" | awk '/"ifindex"/ {
		match($0, /"placed_bytes": [0-9]+/); b += substr($0, RSTART + 16, RLENGTH - 16)
		match($0, /"placed_fpdus": [0-9]+/); f += substr($0, RSTART + 16, RLENGTH - 16)
		s = $0; sub(/.*"skipped": \{/, "", s); n = split(s, kv, /, /)
		for (i = 1; i <= n; i++) { v = kv[i]; sub(/.*: /, "", v); k += v + 0 } }
		END { printf "%.0f %.0f %.0f\n", b, f, k }'
}

# ------------------------------------------------------------- result lines

field() { # key line
	local kv
	for kv in $2; do [ "${kv%%=*}" = "$1" ] && { echo "${kv#*=}"; return; }; done
	die "no $1= in: $2"
}

record() { # name key...: $result's values, one line each in $out/name.key
	local name=$1 key
	shift
	for key in "$@"; do field "$key" "$result" >>"$out/$name.$key"; done
}

# iperf3's figures from its JSON (-J; 3.12 pretty-prints one key a line): from end's
# "sum_received", the receiver's seconds, bytes and goodput; from "cpu_utilization_percent",
# each end's own CPU (clock(): user and system time, softirq it was charged for included)
# in percent of one CPU over its test, "host_total" the client's and "remote_total" the
# server's, and that in ms over the receiver's seconds. One line of key=value pairs.
iperf3_figures() { # file
	awk 'function num(v) { gsub(/[^0-9.eE+-]/, "", v); return v }
		/"sum_received"/ { f = 1 }
		f && /"seconds"/ && s == "" { s = num($2) }
		f && /"bytes"/ && b == "" { b = num($2) }
		f && /"bits_per_second"/ && g == "" { g = num($2) }
		/"cpu_utilization_percent"/ { c = 1 }
		c && /"host_total"/ { h = num($2) }
		c && /"remote_total"/ { r = num($2); c = 0 }
		END { if (g != "" && r != "") printf "gbps=%.3f seconds=%.3f bytes=%.0f " \
			"client_cpu_pct=%.1f server_cpu_pct=%.1f client_cpu_ms=%.1f server_cpu_ms=%.1f",
			g / 1e9, s, b, h, r, h * s * 10, r * s * 10 }' "$1"
}

# ------------------------------------------------------------- medians and tables

median() { # file [decimals]
	[ -s "$1" ] || { echo na; return; }
	grep -v '^na$' "$1" | sort -g | awk -v d="${2:-2}" '{ v[NR] = $1 } END {
		if (!NR) { print "na"; exit }
		printf "%.*f", d, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
runs_of() { tr '\n' ' ' <"$1" | sed 's/ $//'; }

row() { # cells...: one line of a Markdown table
	local c line="|"

	for c in "$@"; do line="$line $c |"; done
	echo "$line"
}

fp_order() { # n variant...: the variants rotated by n (over as many runs each goes first once)
	local n=$1 i
	shift
	for ((i = 0; i < $#; i++)); do echo "${@:$(((n + i) % $# + 1)):1}"; done
}
