#!/usr/bin/env bash
# peakmem.sh CMD [ARGS...]: run CMD and report its peak memory, split into
# anonymous memory (the heap, stacks and data the process wrote) and
# file-backed pages (its executable and libraries mapped from the page
# cache, which the kernel can drop and re-read at will).
#
# Peak RSS (VmHWM, what /usr/bin/time -f %M prints) counts both. For a
# large Go binary the file-backed part is tens of MB and varies with the
# page cache's folio sizes (the same binary measured 37 and 48 MB on a
# 100-row file), so the anonymous peak is the figure to compare across
# programs. It is sampled every ~2 ms from /proc/PID/status (RssAnon), so a
# peak shorter than that can be missed; VmHWM is exact. The sampling loop
# costs CPU of its own: time CMD itself, not this script, for CPU figures.
#
# Output on stderr: peak_rss_kb peak_anon_kb peak_file_kb (the last two
# sampled), then CMD's exit status is returned.
set -u
"$@" &
pid=$!
anon=0 file=0 hwm=0
exec {never}<> <(:) # a descriptor that never has data: read -t sleeps without forking
while kill -0 "$pid" 2>/dev/null; do
	while read -r k v _; do
		case $k in
		VmHWM:) ((v > hwm)) && hwm=$v ;;
		RssAnon:) ((v > anon)) && anon=$v ;;
		RssFile:) ((v > file)) && file=$v ;;
		esac
	done <"/proc/$pid/status" 2>/dev/null
	read -rt 0.002 -u "$never" _ || true
done
wait "$pid"
rc=$?
echo "peak_rss_kb $hwm peak_anon_kb $anon peak_file_kb $file" >&2
exit $rc
