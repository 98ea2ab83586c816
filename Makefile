# The two set-up commands of the README: `make run` and `make test`.
# Both install what they need from Debian when it is missing, so a fresh machine works.

BUILD_DIR      ?= build
SANITIZE_DIR   ?= build-sanitize
FUZZ_DIR       ?= build-fuzz
# `make fuzz` runs each target this long; `make test` runs each for FUZZ_SMOKE_SECONDS.
FUZZ_SECONDS       ?= 600
FUZZ_SMOKE_SECONDS ?= 4
JOBS           ?= $(shell nproc)
BUILD_PACKAGES := cmake gcc g++ make pkg-config libjemalloc-dev libxxhash-dev liblz4-dev libgtest-dev \
                  liblzf-dev libssl-dev
TEST_PACKAGES  := redis-server redis-sentinel redis-tools python3 python3-redis python3-pytest zstd libzstd-dev \
                  openssl
BENCH_PACKAGES := python3-matplotlib
# libFuzzer is compiler-rt's (libclang-rt-14-dev); llvm-14 has the symbolizer for its reports.
FUZZ_PACKAGES  := clang libclang-rt-14-dev llvm-14
SUDO           := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build server run test test-sanitize bench fuzz fuzz-build deps-build deps-test deps-fuzz \
        deps-node clean

all: build

# dpkg-query tells which packages are not installed; apt runs only when something is.
define apt_install
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null \
	    | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
endef

deps-build:
	$(call apt_install,$(BUILD_PACKAGES))

deps-test: deps-build deps-node
	$(call apt_install,$(TEST_PACKAGES))

# The Node.js clients the integration tests log in with (ioredis, node-redis), at the versions
# tests/node/package-lock.json pins, from the npm registry; Node.js itself from Debian when the
# machine has none.
deps-node:
	@command -v npm >/dev/null || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq nodejs npm; }
	@if [ ! -d tests/node/node_modules ] || [ tests/node/package-lock.json -nt tests/node/node_modules ]; then \
	  npm ci --prefix tests/node --no-audit --no-fund --loglevel=error; \
	fi

deps-fuzz: deps-build
	$(call apt_install,$(FUZZ_PACKAGES))

build: deps-build
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Only the server binary: `make run` should not wait for the test programs to compile.
server: deps-build
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS) --target goblin-server

run: server
	mkdir -p data
	$(BUILD_DIR)/goblin-server --port 6379 --bind 127.0.0.1 --dir ./data

# A few seconds of every fuzz target from its seed corpus come first: a parser that crashes on
# its own seeds or their near neighbours fails the run at once.
test: deps-test build fuzz-build
	fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SMOKE_SECONDS)
	cd $(BUILD_DIR) && ctest --output-on-failure --timeout 1200

test-sanitize: deps-test
	cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGOBLIN_SANITIZE=ON >/dev/null
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	cd $(SANITIZE_DIR) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure --timeout 2400

bench: deps-test build
	$(call apt_install,$(BENCH_PACKAGES))
	bench/memory.py --server $(BUILD_DIR)/goblin-server
	bench/throughput.sh $(BUILD_DIR)/goblin-server
	bench/eviction.sh $(BUILD_DIR)/goblin-server
	bench/persistence.py --server $(BUILD_DIR)/goblin-server
	bench/scripting.py --server $(BUILD_DIR)/goblin-server
	bench/stream_groups.py --server $(BUILD_DIR)/goblin-server
	bench/stream_trim.py --server $(BUILD_DIR)/goblin-server
	bench/replication.py sync --server $(BUILD_DIR)/goblin-server
	bench/replication.py throughput --server $(BUILD_DIR)/goblin-server
	bench/persistence.py --server $(BUILD_DIR)/goblin-server --crash-cycles 50
	bench/replication.py failover --server $(BUILD_DIR)/goblin-server --kills 50

# The libFuzzer targets (fuzz/README.md), built by clang with ASan and UBSan in their own
# folder; only the libraries they drive are compiled.
fuzz-build: deps-fuzz
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -DGOBLIN_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" >/dev/null
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target fuzzers

fuzz: fuzz-build
	fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR) $(FUZZ_DIR)
