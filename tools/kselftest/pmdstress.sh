#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pmdstress under the kselftest runner (copy to tools/testing/selftests/mm/,
# add it to TEST_PROGS): KTAP on stdout, the JSON report kept, and
# pmdstress's exit status turned into the runner's. The runner reads only
# 0 (pass) and 4 (KSFT_SKIP) specially; anything else is "not ok". pmdstress
# uses 4 for a hang, so passing its status through would report a hang as a
# skip: every failure becomes KSFT_FAIL, with pmdstress's own status said on
# stderr (the runner keeps stderr in the log).
#
# Arguments are added to pmdstress's (a later --duration overrides ours).
# PMDSTRESS: the binary (default: ./pmdstress beside this script, then PATH);
# PMDSTRESS_OUT: where pmdstress.json goes (default /tmp).

ksft_pass=0
ksft_fail=1
ksft_skip=4

here=$(dirname "$0")
if [ -z "$PMDSTRESS" ]; then
	if [ -x "$here/pmdstress" ]; then
		PMDSTRESS=$here/pmdstress
	else
		PMDSTRESS=$(command -v pmdstress)
	fi
fi
if [ -z "$PMDSTRESS" ] || [ ! -x "$PMDSTRESS" ]; then
	echo "pmdstress.sh: no pmdstress binary (set PMDSTRESS or put it beside this script): SKIP" >&2
	exit $ksft_skip
fi

# In the background, so a SIGTERM to this script (the runner's timeout signals
# only its child) reaches pmdstress, which then writes its reports and restores
# what it changed instead of running on, orphaned.
"$PMDSTRESS" --duration 60s --ktap - --json "${PMDSTRESS_OUT:-/tmp}/pmdstress.json" "$@" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null' HUP INT TERM
# A trapped signal ends wait early (status > 128); wait until pmdstress is gone.
while :; do
	wait $pid
	rc=$?
	kill -0 $pid 2>/dev/null || break
done
case $rc in
0)	exit $ksft_pass ;;
125)	exit $ksft_skip ;;	# cannot run here: skipped, with the reasons in the KTAP
1)	why="data corruption or a fault on a live chunk" ;;
2)	why="usage or configuration error" ;;
3)	why="kernel log splat or new taint" ;;
4)	why="hang" ;;
5)	why="internal error" ;;
6)	why="stopped at once by a second signal: no report" ;;
129|130|143) why="stopped by a signal before its end, clean so far" ;;
*)	why="not a pmdstress verdict (killed by a signal?)" ;;
esac
echo "pmdstress.sh: pmdstress exit $rc ($why): FAIL" >&2
exit $ksft_fail
