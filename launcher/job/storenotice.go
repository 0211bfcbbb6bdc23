package job

import (
	"fmt"
	"io"

	"github.com/gocoll/gocoll/launcher/store"
)

// closeStore closes the store the launcher served and says, in one line on
// w, what it refused: connections without the job's key, and frames with a
// wrong tag (nothing when none).
func closeStore(srv *store.Server, w io.Writer) {
	_ = srv.Close()
	st := srv.Stats()
	if st.RefusedKey == 0 && st.BadTags == 0 {
		return
	}
	fmt.Fprintf(w, "gocoll run: the store refused %d connections without this job's key and %d frames with a wrong tag (%d connections accepted, %d authenticated)\n",
		st.RefusedKey, st.BadTags, st.Accepted, st.Authenticated)
}
