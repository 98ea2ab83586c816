# The two set-up commands of the README: `make run` and `make test`.
# Both install what they need from Debian when it is missing, so a fresh machine works.

BUILD_DIR      ?= build
SANITIZE_DIR   ?= build-sanitize
JOBS           ?= $(shell nproc)
BUILD_PACKAGES := cmake gcc g++ make pkg-config libjemalloc-dev libxxhash-dev liblz4-dev libgtest-dev \
                  liblzf-dev libssl-dev
TEST_PACKAGES  := redis-server redis-sentinel redis-tools python3 python3-redis python3-pytest zstd libzstd-dev
BENCH_PACKAGES := python3-matplotlib
SUDO           := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build server run test test-sanitize bench deps-build deps-test clean

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

deps-test: deps-build
	$(call apt_install,$(TEST_PACKAGES))

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

test: deps-test build
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

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR)
