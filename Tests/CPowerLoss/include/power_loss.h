#ifndef LATCHKEY_TEST_POWER_LOSS_H
#define LATCHKEY_TEST_POWER_LOSS_H

/// A power cut for SQLite, for the durability trials (tests only).
///
/// Registers the VFS "latchkey-power-loss" as SQLite's default. It passes every call to the default unix
/// VFS and keeps, beside each file, `<file>.synced`: the file as a power cut would leave it — its contents
/// when it was opened (an existing file) and after each successful sync. A deleted file loses its copy.
/// With `honor_syncs` 0 it ignores every sync instead, like a disk that loses whatever was not written
/// back (what `PRAGMA synchronous = OFF` risks): the control that shows a trial catches missing syncs.
/// Returns SQLITE_OK or an SQLite error code.
int latchkey_power_loss_register(int honor_syncs);

#endif
