#!/bin/sh
# iwxd.service as `make install` put it under ROOT (PREFIX=/usr): systemd-analyze verify
# says nothing of it, and it sets MemoryMax= and TasksMax=. The copy it reads names ROOT's iwxd (verify checks ExecStart's
# program is there), and man finds ROOT's pages (verify checks Documentation=).
# usage: unit.sh ROOT
set -eu
[ $# -eq 1 ] || { echo "usage: $0 ROOT" >&2; exit 2; }
root=$(cd "$1" && pwd)
unit=$root/usr/lib/systemd/system/iwxd.service
[ -f "$unit" ] || { echo "unit.sh: no $unit" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s|^ExecStart=/|ExecStart=$root/|" "$unit" > "$tmp/iwxd.service"
grep -q "^ExecStart=$root/usr/sbin/iwxd " "$tmp/iwxd.service" ||
	{ echo "unit.sh: $unit does not start /usr/sbin/iwxd" >&2; exit 1; }
# backstops for what escapes iwxd's own limits (issue 42): memory and tasks
for key in MemoryMax TasksMax; do
	grep -q "^$key=" "$unit" || { echo "unit.sh: $unit sets no $key=" >&2; exit 1; }
done
# verify warns on stderr and still exits 0: any word from it is a failure
out=$(MANPATH=$root/usr/share/man systemd-analyze verify "$tmp/iwxd.service" 2>&1) || {
	echo "$out"; echo "unit.sh: systemd-analyze verify failed" >&2; exit 1; }
if [ -n "$out" ]; then
	echo "$out"; echo "unit.sh: systemd-analyze verify warns of iwxd.service" >&2; exit 1
fi
