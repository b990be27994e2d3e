package shard

import "testing"

// TestShardOfIsTheClusterSlot: a key's shard is its Redis Cluster slot
// (CRC16 of the hash tag) modulo the shard count, the same in every process.
func TestShardOfIsTheClusterSlot(t *testing.T) {
	// Slots as CLUSTER KEYSLOT reports them.
	for key, slot := range map[string]int{"foo": 12182, "bar": 5061, "{user1000}.following": 3443, "{user1000}.followers": 3443, "123456789": 12739} {
		if got := ShardOf([]byte(key), 16384); got != slot {
			t.Errorf("slot of %q = %d, want %d", key, got, slot)
		}
	}
}
