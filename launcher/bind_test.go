package launcher

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// GOCOLL_BIND_CORE's values round-trip through String, and bad ones are a
// one-line error naming the variable, from ParseEnv as from every check.
func TestBindCoreValues(t *testing.T) {
	for v, want := range map[string]BindCore{
		"":                  {},
		"0/1":               {Index: 0, Of: 1},
		"3/4":               {Index: 3, Of: 4},
		"1/2,oversubscribe": {Index: 1, Of: 2, Oversubscribe: true},
	} {
		got, err := parseBindCore(v)
		require.NoError(t, err, v)
		require.Equal(t, want, got, v)
		if v != "" {
			require.Equal(t, v, got.String())
		}
	}
	for _, v := range []string{"1", "2/2", "-1/2", "a/b", "0/2,over", "0/2 ", "0/100000", "/", "0/0"} {
		_, err := parseBindCore(v)
		require.Error(t, err, v)
		require.Contains(t, err.Error(), `GOCOLL_BIND_CORE="`+v+`": want INDEX/RANKS`)
	}
	job, err := ParseEnv(envOf("GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_INSECURE=1", "GOCOLL_BIND_CORE=1/2"))
	require.NoError(t, err)
	require.Equal(t, BindCore{Index: 1, Of: 2}, job.BindCore)
	_, err = ParseEnv(envOf("GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_INSECURE=1", "GOCOLL_BIND_CORE=2/2"))
	require.ErrorContains(t, err, "GOCOLL_BIND_CORE")
}
