package store

import "context"

// Set implements Store.
func (c *Client) Set(ctx context.Context, key string, value []byte) error {
	_, err := c.do(ctx, opSet, [][]byte{[]byte(key), value}, nil)
	return err
}

// Get implements Store. While it waits, the server holds one of its
// MaxPendingWaits slots.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	r, err := c.do(ctx, opGet, [][]byte{[]byte(key)}, []string{key})
	return r.value, err
}

// TryGet implements Store.
func (c *Client) TryGet(ctx context.Context, key string) ([]byte, bool, error) {
	r, err := c.do(ctx, opTryGet, [][]byte{[]byte(key)}, nil)
	if err != nil || !r.found {
		return nil, false, err
	}
	return r.value, true, nil
}

// Add implements Store.
func (c *Client) Add(ctx context.Context, key string, delta int64) (int64, error) {
	r, err := c.do(ctx, opAdd, [][]byte{[]byte(key), encodeInt64(delta)}, nil)
	return r.counter, err
}

// CompareAndSet implements Store.
func (c *Client) CompareAndSet(ctx context.Context, key string, expected, desired []byte) ([]byte, bool, error) {
	r, err := c.do(ctx, opCAS, casItems(key, expected, desired), nil)
	return r.value, r.swapped, err
}

// Wait implements Store. While it waits, the server holds one of its
// MaxPendingWaits slots.
func (c *Client) Wait(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	items := make([][]byte, len(keys))
	for i, k := range keys {
		items[i] = []byte(k)
	}
	_, err := c.do(ctx, opWait, items, append([]string(nil), keys...))
	return err
}

// Delete implements Store.
func (c *Client) Delete(ctx context.Context, key string) (bool, error) {
	r, err := c.do(ctx, opDelete, [][]byte{[]byte(key)}, nil)
	return r.existed, err
}

// do sends one request and decodes the OK answer.
func (c *Client) do(ctx context.Context, op opCode, items [][]byte, waitKeys []string) (result, error) {
	resp, err := c.call(ctx, &request{op: op, items: items}, waitKeys)
	if err != nil {
		return result{}, err
	}
	r, err := decodeResult(op, resp.items)
	if err != nil {
		c.fail(err) // the server speaks another protocol: stop using it
	}
	return r, err
}
