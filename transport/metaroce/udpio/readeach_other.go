//go:build !linux

package udpio

// each reads one datagram at a time and hands it to handle.
func (r reader) each(s *Socket, ms []Message, handle func(n int) bool) error {
	for {
		n, err := r.read(s, ms)
		if err != nil {
			return err
		}
		if !handle(n) {
			return nil
		}
	}
}
