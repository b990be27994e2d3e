# redshard — common tasks. Everything is plain `go`; this file only names it.

GO      ?= go
BIN     := bin/redshard-server
ARGS    ?=
FUZZTIME ?= 20s

.PHONY: build run test vet fuzz clean install

# install: where `make install` puts things (DESTDIR for staging).
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SYSCONFDIR ?= $(PREFIX)/etc
UNITDIR    ?= $(PREFIX)/lib/systemd/system
DESTDIR    ?=

## build: compile the server into bin/redshard-server
build:
	$(GO) build -o $(BIN) ./cmd/redshard-server

## run: build and start the server (embedded default config; extra options via ARGS="--port 7000 --shards 2")
run: build
	./$(BIN) $(ARGS)

## test: the whole suite, unit and end-to-end (tests/ builds and starts the real binary)
test:
	$(GO) test -count=1 ./...

## vet: go vet on every package
vet:
	$(GO) vet ./...

## fuzz: fuzz the RESP parser, the AOF loader, every data command's arguments, the Lua engine's decoders, syntax check and conversions, the FUNCTION RESTORE payload parser, RESTORE's payloads, the RDB reader and stream nodes, the LZF compressor, FUZZTIME each (default 20s)
fuzz:
	$(GO) test ./resp/ -run '^$$' -fuzz FuzzParser -fuzztime $(FUZZTIME)
	$(GO) test ./aof/ -run '^$$' -fuzz FuzzLoad -fuzztime $(FUZZTIME)
	$(GO) test ./server/ -run '^$$' -fuzz FuzzCommands -fuzztime $(FUZZTIME)
	$(GO) test ./server/ -run '^$$' -fuzz FuzzRestore -fuzztime $(FUZZTIME)
	$(GO) test ./lua/ -run '^$$' -fuzz FuzzReplyToLua -fuzztime $(FUZZTIME)
	$(GO) test ./lua/ -run '^$$' -fuzz FuzzDecoders -fuzztime $(FUZZTIME)
	$(GO) test ./lua/ -run '^$$' -fuzz FuzzCheckSyntax -fuzztime $(FUZZTIME)
	$(GO) test ./lua/ -run '^$$' -fuzz FuzzConversions -fuzztime $(FUZZTIME)
	$(GO) test ./aof/rdb/ -run '^$$' -fuzz FuzzParseFunctions -fuzztime $(FUZZTIME)
	$(GO) test ./aof/rdb/ -run '^$$' -fuzz FuzzReadRDB -fuzztime $(FUZZTIME)
	$(GO) test ./aof/rdb/ -run '^$$' -fuzz FuzzStreamNode -fuzztime $(FUZZTIME)
	$(GO) test ./aof/rdb/ -run '^$$' -fuzz FuzzLZFRoundTrip -fuzztime $(FUZZTIME)

## install: build, then install the server and redshard-check-aof in $(BINDIR), redshard.conf in $(SYSCONFDIR)/redshard (kept if present) and the systemd unit in $(UNITDIR), its paths rewritten for PREFIX
install:
	$(GO) build -o bin/redshard-server ./cmd/redshard-server
	$(GO) build -o bin/redshard-check-aof ./cmd/redshard-check-aof
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)/redshard $(DESTDIR)$(UNITDIR)
	install -m 755 bin/redshard-server bin/redshard-check-aof $(DESTDIR)$(BINDIR)/
	test -e $(DESTDIR)$(SYSCONFDIR)/redshard/redshard.conf || \
		install -m 644 cmd/redshard-server/redshard.conf $(DESTDIR)$(SYSCONFDIR)/redshard/redshard.conf
	sed -e 's#/usr/local/bin/#$(BINDIR)/#' -e 's#/usr/local/etc/#$(SYSCONFDIR)/#' \
		cmd/redshard-server/redshard.service > $(DESTDIR)$(UNITDIR)/redshard.service
	chmod 644 $(DESTDIR)$(UNITDIR)/redshard.service

## clean: remove build output
clean:
	rm -rf bin

# Benchmarks against redis-server (see bench/README.md). Extra flags go in
# BENCHARGS, e.g. make bench BENCHARGS="-server-cpus 0-3 -client-cpus 4-7".
BENCHARGS ?=

.PHONY: bench bench-quick profile

## bench: full comparison with redis-server, 3 rounds per figure (~8 min on 2 cores); writes bench/results/<date>-<host>.{md,svg}
bench:
	$(GO) run ./bench $(BENCHARGS)

## bench-quick: one round, fewer requests (under a minute)
bench-quick:
	$(GO) run ./bench -quick $(BENCHARGS)

## profile: SET/GET load on redshard with REDSHARD_CPUPROFILE/REDSHARD_MEMPROFILE set, then pprof -top
profile:
	$(GO) run ./bench -profile $(BENCHARGS)

# The crash matrix (see README.md, "Crash testing"). Extra flags for the tool
# go in CRASHARGS, e.g. make crashtest CRASHARGS="--quick --keep".
CRASHARGS ?=

.PHONY: crashtest

## crashtest: the full crash matrix against redshard under always and everysec, 1 and 4 shards (about 8 min on 2 cores; power rows need FUSE)
crashtest:
	$(GO) build -o bin/redshard-server ./cmd/redshard-server
	$(GO) build -o bin/redshard-crashtest ./cmd/redshard-crashtest
	for policy in always everysec; do for shards in 1 4; do \
		./bin/redshard-crashtest --strict $(CRASHARGS) -- ./bin/redshard-server --port {port} --bind 127.0.0.1 \
			--dir {dir} --appendonly yes --appendfsync $$policy --shards $$shards --enable-failpoints yes || exit 1; \
	done; done
