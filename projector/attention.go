package projector

import "zombiezen.com/go/sqlite"

// OpenConflictCount counts the conflicts that are open (waiting for a
// person or a later commit).
func OpenConflictCount(conn *sqlite.Conn) (int64, error) {
	var n int64
	err := queryConn(conn, "SELECT count(*) FROM hk_conflicts WHERE state = 'open'", func(st *sqlite.Stmt) error {
		n = st.ColumnInt64(0)
		return nil
	})
	return n, err
}
