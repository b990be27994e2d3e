//go:build !linux

package shard

func mapBig(n int) []byte { return nil }

func dropBig(b []byte) {}

func setSmallPages(b []byte) {}
