#!/usr/bin/env bash
# Fetches Debian's source package of Highway (the version installed as libhwy-dev) into DEST/highway.
# Uses a private APT state so the machine's own configuration is left untouched.
set -euo pipefail
dest=${1:?usage: fetch-highway-source.sh DEST}
if [ -f "$dest/highway/hwy/targets.cc" ]; then
  echo "setup: Highway sources present"; exit 0
fi
version=$(dpkg-query -W -f='${source:Version}' libhwy-dev)
work="$dest/apt-src"
rm -rf "$work"; mkdir -p "$work/lists/partial" "$work/sources.list.d" "$work/archives/partial"

# Mirror every binary entry (one-line and deb822 forms) as a source entry.
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] && grep -E '^\s*deb\s' "$f" | sed -E 's/^\s*deb\s/deb-src /' >> "$work/sources.list.d/src.list" || true
done
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] && sed -E 's/^Types:.*/Types: deb-src/' "$f" > "$work/sources.list.d/$(basename "$f")"
done
touch "$work/sources.list.d/src.list"

apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/sources.list.d"
          -o "Dir::State::Lists=$work/lists" -o "Dir::Cache::Archives=$work/archives"
          -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
echo "setup: fetching Highway $version source package"
apt-get "${apt_opts[@]}" update -qq
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only "highway=$version" -qq)
tarball=$(ls "$work"/highway_*.orig.tar.* | head -n1)
mkdir -p "$dest/highway.tmp"
tar -xf "$tarball" -C "$dest/highway.tmp" --strip-components=1
rm -rf "$dest/highway"; mv "$dest/highway.tmp" "$dest/highway"
rm -rf "$work"
echo "setup: Highway sources in $dest/highway"
