#include "power_loss.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The wrapped VFS and whether syncs happen. */
static sqlite3_vfs *base_vfs;
static int honor;

typedef struct {
    sqlite3_file base;   /* our methods */
    char *path;          /* the file's name, or NULL for a temporary file */
    sqlite3_file *real;  /* the unix VFS's file, allocated right after this struct */
} PowerLossFile;

/* Copies `path` to `path.synced` (through a temporary name and a rename, so a copy is never half made). */
static int snapshot(const char *path) {
    if (path == NULL) return SQLITE_OK;
    size_t length = strlen(path);
    char *target = malloc(length + 8), *temporary = malloc(length + 12);
    if (target == NULL || temporary == NULL) {
        free(target);
        free(temporary);
        return SQLITE_NOMEM;
    }
    snprintf(target, length + 8, "%s.synced", path);
    snprintf(temporary, length + 12, "%s.synced.tmp", path);
    int result = SQLITE_IOERR;
    int in = open(path, O_RDONLY | O_CLOEXEC);
    int out = in >= 0 ? open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    if (in >= 0 && out >= 0) {
        char buffer[65536];
        ssize_t count;
        result = SQLITE_OK;
        while ((count = read(in, buffer, sizeof buffer)) > 0) {
            if (write(out, buffer, (size_t)count) != count) {
                result = SQLITE_IOERR;
                break;
            }
        }
        if (count < 0) result = SQLITE_IOERR;
    }
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    if (result == SQLITE_OK && rename(temporary, target) != 0) result = SQLITE_IOERR;
    if (result != SQLITE_OK) unlink(temporary);
    free(target);
    free(temporary);
    return result;
}

#define REAL(file) (((PowerLossFile *)(file))->real)

static int pl_close(sqlite3_file *file) {
    PowerLossFile *p = (PowerLossFile *)file;
    int result = p->real->pMethods ? p->real->pMethods->xClose(p->real) : SQLITE_OK;
    free(p->path);
    p->path = NULL;
    return result;
}
static int pl_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), b, n, o); }
static int pl_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xWrite(REAL(f), b, n, o); }
static int pl_truncate(sqlite3_file *f, sqlite3_int64 size) { return REAL(f)->pMethods->xTruncate(REAL(f), size); }
static int pl_sync(sqlite3_file *f, int flags) {
    if (!honor) return SQLITE_OK;
    int result = REAL(f)->pMethods->xSync(REAL(f), flags);
    return result == SQLITE_OK ? snapshot(((PowerLossFile *)f)->path) : result;
}
static int pl_file_size(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int pl_lock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int pl_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int pl_check_reserved(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int pl_file_control(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int pl_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int pl_device_characteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int pl_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), page, size, extend, out);
}
static int pl_shm_lock(sqlite3_file *f, int offset, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags); }
static void pl_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int pl_shm_unmap(sqlite3_file *f, int delete_flag) { return REAL(f)->pMethods->xShmUnmap(REAL(f), delete_flag); }
static int pl_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **out) { return REAL(f)->pMethods->xFetch(REAL(f), o, n, out); }
static int pl_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), o, p); }

static const sqlite3_io_methods methods = {
    3, pl_close, pl_read, pl_write, pl_truncate, pl_sync, pl_file_size, pl_lock, pl_unlock, pl_check_reserved,
    pl_file_control, pl_sector_size, pl_device_characteristics, pl_shm_map, pl_shm_lock, pl_shm_barrier, pl_shm_unmap,
    pl_fetch, pl_unfetch,
};

static int pl_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    PowerLossFile *p = (PowerLossFile *)file;
    p->real = (sqlite3_file *)&p[1];
    p->path = name ? strdup(name) : NULL;
    int existed = name != NULL && access(name, F_OK) == 0;
    int result = base_vfs->xOpen(base_vfs, name, p->real, flags, out_flags);
    if (result != SQLITE_OK) {
        free(p->path);
        p->path = NULL;
        p->base.pMethods = NULL;
        return result;
    }
    p->base.pMethods = &methods;
    /* What was on disk before this process opened it counts as durable: it was written and closed before. */
    if (existed && p->path != NULL) {
        char *copy = malloc(strlen(p->path) + 8);
        if (copy == NULL) return SQLITE_NOMEM;
        sprintf(copy, "%s.synced", p->path);
        int have = access(copy, F_OK) == 0;
        free(copy);
        if (!have) snapshot(p->path);
    }
    return SQLITE_OK;
}

static int pl_delete(sqlite3_vfs *vfs, const char *name, int sync_directory) {
    (void)vfs;
    int result = base_vfs->xDelete(base_vfs, name, sync_directory);
    char *copy = malloc(strlen(name) + 8);
    if (copy != NULL) {
        sprintf(copy, "%s.synced", name);
        unlink(copy);
        free(copy);
    }
    return result;
}

static int pl_access(sqlite3_vfs *v, const char *n, int f, int *out) { (void)v; return base_vfs->xAccess(base_vfs, n, f, out); }
static int pl_full_pathname(sqlite3_vfs *v, const char *n, int size, char *out) {
    (void)v;
    return base_vfs->xFullPathname(base_vfs, n, size, out);
}
static void *pl_dl_open(sqlite3_vfs *v, const char *n) { (void)v; return base_vfs->xDlOpen(base_vfs, n); }
static void pl_dl_error(sqlite3_vfs *v, int n, char *out) { (void)v; base_vfs->xDlError(base_vfs, n, out); }
static void (*pl_dl_sym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return base_vfs->xDlSym(base_vfs, h, s); }
static void pl_dl_close(sqlite3_vfs *v, void *h) { (void)v; base_vfs->xDlClose(base_vfs, h); }
static int pl_randomness(sqlite3_vfs *v, int n, char *out) { (void)v; return base_vfs->xRandomness(base_vfs, n, out); }
static int pl_sleep(sqlite3_vfs *v, int micros) { (void)v; return base_vfs->xSleep(base_vfs, micros); }
static int pl_current_time(sqlite3_vfs *v, double *out) { (void)v; return base_vfs->xCurrentTime(base_vfs, out); }
static int pl_last_error(sqlite3_vfs *v, int n, char *out) { (void)v; return base_vfs->xGetLastError(base_vfs, n, out); }
static int pl_current_time_int64(sqlite3_vfs *v, sqlite3_int64 *out) {
    (void)v;
    return base_vfs->xCurrentTimeInt64(base_vfs, out);
}

static sqlite3_vfs power_loss_vfs;

int latchkey_power_loss_register(int honor_syncs) {
    base_vfs = sqlite3_vfs_find(NULL);
    if (base_vfs == NULL) return SQLITE_ERROR;
    honor = honor_syncs;
    power_loss_vfs = (sqlite3_vfs){
        2, (int)sizeof(PowerLossFile) + base_vfs->szOsFile, base_vfs->mxPathname, NULL, "latchkey-power-loss", NULL,
        pl_open, pl_delete, pl_access, pl_full_pathname, pl_dl_open, pl_dl_error, pl_dl_sym, pl_dl_close,
        pl_randomness, pl_sleep, pl_current_time, pl_last_error, pl_current_time_int64,
    };
    return sqlite3_vfs_register(&power_loss_vfs, 1);
}
