/* packvtab.h — the SQL module gl_packed_events: the packs of a packed
 * recording (event_packs, pack.h) as rows with event_rows' columns, so
 * that event_rows, event_log and every documented view read them. An
 * eponymous table: registering the module on a connection is all it
 * takes. gpuledger's own connections register it; for the sqlite3 shell
 * and other tools it is the loadable extension libgpuledger_sql.so
 * (".load libgpuledger_sql", conn.load_extension(...)), built from the
 * same file.
 *
 * What it reads fast: a range of seq (the packs holding it, by their key),
 * ref_seq = x (an index of ref_seq built at the first such question and
 * kept while no pack is added), and it skips packs whose op, kind or time
 * range cannot match; anything else is a scan of every pack. The rows come
 * in seq order. */
#ifndef GL_PACKVTAB_H
#define GL_PACKVTAB_H

#include <sqlite3.h>

/* SQLITE_OK or an SQLite error code. */
int gl_packvtab_register(sqlite3 *db);

#endif
