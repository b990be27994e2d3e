package shard

import (
	"strconv"
	"testing"
)

func benchZset(b *testing.B, n int) (*Ctx, [][]byte) {
	c := ksCtx(1)
	c.Out = make([]byte, 0, 1<<16)
	argv := [][]byte{[]byte("ZADD"), []byte("z"), nil, nil}
	for i := 0; i < n; i++ {
		argv[2] = []byte(strconv.Itoa(i * 7919 % n))
		argv[3] = []byte("element:" + strconv.Itoa(i))
		c.Out = c.Out[:0]
		cmdZadd(c, argv)
	}
	return c, argv
}

func BenchmarkZaddSkiplist(b *testing.B) {
	c, argv := benchZset(b, 100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		argv[2] = strconv.AppendInt(argv[2][:0], int64(i*31%1000000), 10)
		argv[3] = strconv.AppendInt(append(argv[3][:0], "new:"...), int64(i%1000000), 10)
		c.Out = c.Out[:0]
		cmdZadd(c, argv)
	}
}

func BenchmarkZpopminSkiplist(b *testing.B) {
	c, _ := benchZset(b, 100000)
	pop := [][]byte{[]byte("ZPOPMIN"), []byte("z")}
	add := [][]byte{[]byte("ZADD"), []byte("z"), nil, nil}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Out = c.Out[:0]
		cmdZpopmin(c, pop)
		b.StopTimer()
		add[2] = strconv.AppendInt(add[2][:0], int64(i%100000), 10)
		add[3] = strconv.AppendInt(append(add[3][:0], "re:"...), int64(i), 10)
		c.Out = c.Out[:0]
		cmdZadd(c, add)
		b.StartTimer()
	}
}

func BenchmarkZrangeSkiplist(b *testing.B) {
	c, _ := benchZset(b, 100000)
	argv := [][]byte{[]byte("ZRANGE"), []byte("z"), []byte("5000"), []byte("5099"), []byte("WITHSCORES")}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Out = c.Out[:0]
		cmdZrange(c, argv)
	}
}
