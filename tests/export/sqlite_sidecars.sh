#!/bin/sh
# sqlite_sidecars.sh ETLKIT DATA WORK - `export --to sqlite` and the journals SQLite keeps beside a
# database under its name (OUT-journal, OUT-wal, OUT-shm). They belong to the name, not to the file:
# an old one left by a writer that died is replayed by the next client that opens OUT, over the new
# export (its tables gone, or "database disk image is malformed"). Without --force such a file is
# refused as an existing OUT is (exit 1, nothing written); with --force it is removed as OUT is
# replaced (a symbolic link itself, never what it names; anything else refused). The sqlite3 shell is
# the consumer that must see the export.
set -u
etlkit=$1; data=$2; work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 shell not found: skipped"; exit 77; }
passes=0; fails=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', expected '$2'"; fi
}
q() { sqlite3 -batch -noheader "$@" 2>&1; }
t=$data/synth-64-qpc-full.etl
slices=$("$etlkit" export "$t" --to sqlite -o ref.db --quiet && q ref.db 'SELECT COUNT(*) FROM slice')

# A WAL database whose writer was killed before a checkpoint: w.db-wal and w.db-shm stay (the shell
# kills itself with .system, so it never closes the database).
mkwal() {
  rm -f "$1" "$1-wal" "$1-shm"
  sqlite3 "$1" >/dev/null 2>&1 <<EOF
PRAGMA journal_mode = WAL;
PRAGMA wal_autocheckpoint = 0;
CREATE TABLE mine(a);
INSERT INTO mine SELECT randomblob(3000) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) SELECT i FROM n);
.system kill -9 \$PPID
EOF
}
# A rollback database whose writer was killed in a transaction: a hot j.db-journal.
mkjournal() {
  rm -f "$1" "$1-journal"
  sqlite3 "$1" >/dev/null 2>&1 <<EOF
CREATE TABLE mine(a);
INSERT INTO mine SELECT randomblob(3000) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) SELECT i FROM n);
PRAGMA cache_size = 1;
BEGIN;
UPDATE mine SET a = randomblob(3001);
.system kill -9 \$PPID
EOF
}

mkwal w.db
[ -s w.db-wal ] && ok || { bad "the WAL fixture: no w.db-wal"; echo "$passes passed, $fails failed"; exit 1; }
mkjournal j.db
[ -s j.db-journal ] && ok || { bad "the journal fixture: no j.db-journal"; echo "$passes passed, $fails failed"; exit 1; }

# Without --force: refused like an existing OUT (exit 1, one line naming the file and --force), nothing touched.
cp w.db-wal w.wal.orig
"$etlkit" export "$t" --to sqlite -o w.db --quiet 2>err; check "w.db with its -wal, no --force" 1 $?
check "one line" 1 "$(wc -l < err)"
rm w.db # the user removed the database, not its WAL: still refused, the new OUT would get it
"$etlkit" export "$t" --to sqlite -o w.db --quiet 2>err; check "a -wal alone, no --force" 1 $?
grep -q 'w.db-wal' err && grep -q -- '--force' err && ok || bad "the refusal names w.db-wal and --force: $(cat err)"
check "nothing written" "w.db-shm w.db-wal" "$(ls w.db* | tr '\n' ' ' | sed 's/ $//')"
cmp -s w.db-wal w.wal.orig && ok || bad "the -wal kept as it was"
"$etlkit" export "$t" --to sqlite -o j.db --quiet 2>err; check "j.db with its hot journal, no --force" 1 $?
check "the journal kept" 1 "$([ -s j.db-journal ] && echo 1)"
: > n.db-shm
"$etlkit" export "$t" --to sqlite -o n.db --quiet 2>/dev/null; check "a -shm alone, no --force" 1 $?
check "n.db not made" "" "$(ls n.db 2>/dev/null)"

# With --force: the sidecars go as OUT is replaced, and the sqlite3 shell sees the export.
mkwal w.db
"$etlkit" export "$t" --to sqlite -o w.db --force --quiet; check "w.db --force" 0 $?
check "w.db: no sidecar left" "w.db" "$(ls w.db* | tr '\n' ' ' | sed 's/ $//')"
check "w.db: the export's slices" "$slices" "$(q w.db 'SELECT COUNT(*) FROM slice')"
check "w.db: not the old table" "" "$(q w.db "SELECT name FROM sqlite_master WHERE name = 'mine'")"
check "w.db: integrity" ok "$(q w.db 'PRAGMA integrity_check')"
mkjournal j.db
"$etlkit" export "$t" --to sqlite -o j.db --force --quiet; check "j.db --force" 0 $?
check "j.db: no journal left" "j.db" "$(ls j.db* | tr '\n' ' ' | sed 's/ $//')"
check "j.db: the export's slices" "$slices" "$(q j.db 'SELECT COUNT(*) FROM slice')"
check "j.db: integrity" ok "$(q j.db 'PRAGMA integrity_check')"
"$etlkit" export "$t" --to sqlite -o n.db --force --quiet; check "a -shm alone, --force" 0 $?
check "n.db: the -shm removed" "n.db" "$(ls n.db* | tr '\n' ' ' | sed 's/ $//')"

# A sidecar that is a symbolic link: the link goes, what it names stays as it was. Not under wine
# (ETLKIT_TARGET=windows): it shows the program a host's symbolic link as the file it names, so the
# Windows build cannot tell one (an NTFS link is a reparse point that DeleteFile removes itself).
if [ "${ETLKIT_TARGET:-}" = windows ]; then
  echo "skipped on Windows: a -wal symbolic link (wine shows a host link as the file it names)"
else
  echo keep > elsewhere
  ln -s elsewhere l.db-wal
  "$etlkit" export "$t" --to sqlite -o l.db --quiet 2>/dev/null; check "a -wal link, no --force" 1 $?
  "$etlkit" export "$t" --to sqlite -o l.db --force --quiet; check "a -wal link, --force" 0 $?
  check "the link removed" "" "$(ls -d l.db-wal 2>/dev/null)"
  check "what it named kept" keep "$(cat elsewhere)"
  check "l.db: the export's slices" "$slices" "$(q l.db 'SELECT COUNT(*) FROM slice')"
fi
# Not a regular file or a link (a directory there): refused even with --force, nothing written.
mkdir d.db-journal
"$etlkit" export "$t" --to sqlite -o d.db --force --quiet 2>err; check "a -journal directory, --force" 1 $?
check "d.db not made" "" "$(ls d.db 2>/dev/null)"
check "the directory kept" 1 "$([ -d d.db-journal ] && echo 1)"
# The input under a sidecar's name (--force would remove it): a usage error, as -o naming the input.
cp "$t" in.db-wal
"$etlkit" export in.db-wal --to sqlite -o in.db --force --quiet 2>/dev/null; check "the input as OUT-wal" 64 $?
cmp -s in.db-wal "$t" && ok || bad "the input kept"
ln -s in.db-wal in2.db-journal
"$etlkit" export in.db-wal --to sqlite -o in2.db --force --quiet 2>/dev/null; check "a link to the input as OUT-journal" 64 $?
check "in.db, in2.db not made" "" "$(ls in.db in2.db 2>/dev/null)"

# The export leaves no sidecar of its own, and the file is in rollback (not WAL) mode: header bytes
# 18 and 19 (the file format's write and read versions) are 1.
"$etlkit" export "$t" --to sqlite -o own.db --quiet; check "own.db" 0 $?
check "own.db: alone" "own.db" "$(ls own.db* | tr '\n' ' ' | sed 's/ $//')"
check "own.db: not WAL" "1 1" "$(od -An -tu1 -j18 -N2 own.db | tr -s ' ' | sed 's/^ //;s/ $//')"
check "own.db: journal_mode" delete "$(q own.db 'PRAGMA journal_mode')"
check "no temporary left" "" "$(ls -A | grep '\.tmp')"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
