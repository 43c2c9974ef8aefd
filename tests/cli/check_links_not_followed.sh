#!/bin/sh
# Symbolic links planted under every output's name and under the temporary
# names NAME.tmpPID the generator once used (exec keeps the shell's pid): the
# files they point to are never written; a link at an output's name is
# replaced by the output itself, a link to a device is refused and kept.
#   check_links_not_followed.sh GEN TOPOLOGY
d=$(mktemp -d) && mkdir "$d/o" && echo keep > "$d/victim" || exit 1
outs='dot json rules sg.xml sg.hosts o/trd_m.h o/trd_m.c o/trd_m_mpi.c'
sh -c 'for f in '"$outs"'; do ln -s "$1/victim" "$1/$f" && ln -s "$1/victim" "$1/$f.tmp$$" || exit 1; done
  exec "$2" "$3" -o "$1/o" --name m --dot "$1/dot" --export-mpich "$1/json" --export-ompi "$1/rules" --simgrid "$1/sg.xml"' \
  sh "$d" "$1" "$2" || { echo 'generator failed'; exit 1; }
test "$(cat "$d/victim")" = keep || { echo 'written through a link'; exit 1; }
for f in $outs; do
  test -f "$d/$f" && ! test -L "$d/$f" || { echo "$f is not a regular file"; exit 1; }
done
test "$(find "$d" \( -name '*.tmp*' -o -name '.*' \) ! -type l)" = '' || { echo 'a temporary file was left'; exit 1; }
for l in $(find "$d" -name '*.tmp*'); do
  test "$(readlink "$l")" = "$d/victim" || { echo "$l was changed"; exit 1; }
done
ln -s /dev/null "$d/null" && ! "$1" "$2" --dot "$d/null" 2>/dev/null && test -L "$d/null" ||
  { echo 'a link to a device was followed or replaced'; exit 1; }
rm -rf "$d"
echo links kept
