/*
 * tempfile.h - where etlkit's temporary files go, and unlinked scratch files there.
 *
 * The directory is $TMPDIR when it is set and not empty, else /tmp, as POSIX tools do;
 * tmpfile(3) ignores TMPDIR, so a user with a small /tmp could not move the spill.
 */
#ifndef ETLKIT_SRC_BASE_TEMPFILE_H
#define ETLKIT_SRC_BASE_TEMPFILE_H

/* The directory temporary files go to. Never NULL. */
const char *etl_temp_dir(void);
/*
 * A new file in etl_temp_dir(), opened for reading and writing and already unlinked
 * (gone with the process, whatever happens to it): a descriptor, or -1 with errno set.
 */
int etl_temp_open(void);

#endif
