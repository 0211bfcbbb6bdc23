package udpio

// MaxTrainDatagram is the largest datagram [GatherTrains] puts in a train:
// at least four of it fit in one GSO send ([MaxPayload]). A larger one goes
// alone.
const MaxTrainDatagram = MaxPayload / 4

// GatherTrains appends to dst the messages of src packed into GSO trains
// without copying any payload, and returns the extended dst and slices.
//
// A train is a run of consecutive messages of src that are single datagrams
// (Segment 0, [Message.Size] from 1 to [MaxTrainDatagram]) to the same Addr
// and of the same Class, all of the first one's size except the last, which
// may be shorter and then ends the run. A run holds at most [MaxSegments]
// datagrams, [MaxPayload] bytes and 1+[MaxTrainGather] slices (each
// datagram counts its Buf and its Gather slices); the datagram that would
// pass a limit starts the next run. A train is one Message with the first
// datagram's Buf, Addr and Class, Segment set to its size, and as Gather
// the first datagram's Gather slices and then every other datagram's Buf
// and Gather slices in turn: the datagrams' own slices, which WriteBatch
// cuts every Segment bytes wherever they end. The train's Gather lies in
// slices, appended to it (its capacity is reused; a Gather's capacity ends
// at its length).
//
// A message that joins no run (a run of one, an empty datagram, one larger
// than MaxTrainDatagram, or one that is already a train) is appended to dst
// unchanged. The output sends src's datagrams, in order, to the same Addr
// with the same Class; [Message.Segments] of an output message tells how
// many it sends.
// GatherTrains reads src and never writes it nor its bytes; the trains alias
// src's slices, which must stay unchanged until they are written.
func GatherTrains(dst, src []Message, slices [][]byte) ([]Message, [][]byte) {
	for i := 0; i < len(src); {
		j := runEnd(src, i)
		m := src[i]
		if j == i+1 {
			dst = append(dst, m)
			i = j
			continue
		}
		start := len(slices)
		slices = append(slices, m.Gather...)
		for _, d := range src[i+1 : j] {
			slices = append(slices, d.Buf)
			slices = append(slices, d.Gather...)
		}
		dst = append(dst, Message{Buf: m.Buf, Gather: slices[start:len(slices):len(slices)],
			Addr: m.Addr, Class: m.Class, Segment: m.Size()})
		i = j
	}
	return dst, slices
}

// The package fails to compile unless a run of 1+MaxTrainGather slices
// holds at most MaxSegments datagrams (runEnd counts on it).
const _ = uint(MaxSegments - 1 - MaxTrainGather)

// runEnd returns the end (exclusive) of the train that starts at src[i].
func runEnd(src []Message, i int) int {
	m := &src[i]
	seg := m.Size()
	if m.Segment != 0 || seg == 0 || seg > MaxTrainDatagram {
		return i + 1
	}
	j, bytes, slices := i+1, seg, 1+len(m.Gather)
	// Each datagram takes at least one slice, so the slice limit keeps a run
	// within MaxSegments datagrams too.
	for ; j < len(src); j++ {
		d := &src[j]
		n := d.Size()
		if d.Segment != 0 || d.Addr != m.Addr || d.Class != m.Class || n == 0 || n > seg ||
			bytes+n > MaxPayload || slices+1+len(d.Gather) > 1+MaxTrainGather {
			break
		}
		bytes, slices = bytes+n, slices+1+len(d.Gather)
		if n < seg {
			return j + 1
		}
	}
	return j
}
