/*
 * sigclean.h - temporary outputs removed when a signal ends the process.
 *
 * An output is written under a temporary name beside its target and renamed into
 * place when complete (outfile.h). Should SIGINT, SIGTERM, SIGHUP, SIGXFSZ, SIGPIPE or
 * SIGBUS (the input file cut short while mapped: not put off by a held section) end the run first, the handler installed here removes the names registered (files first,
 * then directories; unlink and rmdir only, both async-signal-safe), restores the
 * signal's default action and lets it end the process as it would have: the exit
 * status a shell sees is still 128 + the signal. A signal the process ignores when
 * the first name is registered (nohup's SIGHUP, `trap '' XFSZ`) stays ignored.
 * On Windows the same is done for Ctrl-C, Ctrl-Break and the console closing, by
 * a console control handler (platform.h, etl_on_termination).
 *
 *     int slot = etl_sigclean_add(tmp, false);   once the temporary exists
 *     ... rename(tmp, target) or unlink(tmp) ...
 *     etl_sigclean_remove(slot);                 after it: a signal in between finds nothing
 *
 * The table is fixed (no allocation in the handler, none needed to register) and
 * guarded by a sequence number per slot, so a handler running on another thread
 * never acts on a name half rewritten. Threads may register and remove at once (a
 * dataset's exports run in parallel): a slot is claimed atomically before it is
 * filled in, and removed only by whoever registered it.
 */
#ifndef ETLKIT_SRC_BASE_SIGCLEAN_H
#define ETLKIT_SRC_BASE_SIGCLEAN_H

#include <stdbool.h>

/*
 * Slots in the table: a CSV export's directory and its files (14), times the
 * exports a dataset runs at once (export --jobs: 8 and more leave the rest
 * unregistered, as below), with room to spare. Untouched slots cost no memory.
 */
#define ETL_SIGCLEAN_SLOTS 128

/*
 * Registers path (a directory when dir) for removal on those signals: the slot, or
 * -1 when the table is full or the name longer than a path may be (then it would be
 * left behind by a signal, as before; nothing else changes).
 */
int etl_sigclean_add(const char *path, bool dir);
/* Forgets a slot (-1: nothing). */
void etl_sigclean_remove(int slot);
/*
 * A short section that must not stop half way (the renames that replace a directory's
 * tables as one, outfile.c): a signal that comes meanwhile ends the process, the names
 * still registered removed, at etl_sigclean_release (platform.h, etl_termination_hold).
 * The handler is installed first, so that a signal can only be put off, never end the
 * section by its default action.
 */
void etl_sigclean_hold(void);
void etl_sigclean_release(void);

#endif
