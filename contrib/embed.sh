#!/bin/sh
# Write a C file that holds files as byte arrays: the dashboard's, served
# by http-api.c from the binary (no file is read at run time).
#   embed.sh OUT URLPATH TYPE FILE [URLPATH TYPE FILE ...]
set -eu
out=$1
shift
{
	echo '/* Made by make (contrib/embed.sh): do not edit. */'
	echo '#include "config.h"'
	echo '#include "server.h"'
	i=0
	list=''
	while [ $# -ge 3 ]; do
		echo "static const unsigned char embed_${i}[] = {"
		od -An -v -tx1 "$3" |
			sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g' -e 's/^/\t/'
		echo '};'
		list="$list	{ \"$1\", \"$2\", embed_${i}, sizeof(embed_${i}) },
"
		i=$((i + 1))
		shift 3
	done
	echo 'const struct http_file http_files[] = {'
	printf '%s' "$list"
	echo '	{ NULL, NULL, NULL, 0 },'
	echo '};'
} >"$out.tmp"
mv "$out.tmp" "$out"
