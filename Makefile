# convgpu — the front door. Everything a newcomer needs is one of:
#   make demo    install the missing build packages (only those: no container engines, no
#                Slurm), build, and run the demo on the emulated GPU
#   make check   install the missing packages of the whole test world, build, and run every test (plain, ASan/UBSan, TSan,
#                fuzz, the Debian packages and the node image): every stage runs even when one
#                fails; a table of the stages ends it
# Other targets: all (build only), test (plain tests), asan, tsan, fuzz, check-load (the plain
# tests beside two busy loops), slurm (the Slurm tests alone; `make test` and so `make check`
# run them too), bench, install (PREFIX=/usr/local DESTDIR=), deb (the Debian packages, into
# build-deb/; docs/PACKAGING.md), image (the DaemonSet's node image, from them), package (the
# packages' and the image's tests), clean.

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
BUILD_FUZZ ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CC         ?= cc
CMAKE_GEN  := -G "Unix Makefiles"
# The package tests (label package) need the .debs of `make deb`: `make package` runs them.
CTEST_ARGS ?= --output-on-failure -j $(JOBS) -LE package

.PHONY: all deps deps-build deb-next build docs test check check-load asan tsan fuzz demo bench install deb package image clean slurm

all: build

# Two sets (scripts/install-deps.sh): `build` for building and the demo, `all` for make check.
deps:
	@scripts/install-deps.sh all

deps-build:
	@scripts/install-deps.sh build

$(BUILD)/Makefile:
	cmake -S . -B $(BUILD) $(CMAKE_GEN)

build: $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

# The settings' regions of docs/man/convgpud.8, convgpud.conf.5, docs/OPERATIONS.md and
# packaging/convgpud.conf.example, written from the daemon's settings table
# (src/daemon/settings.def); docs.settings fails while they are stale.
docs: build
	cmake --build $(BUILD) --target docs

test: build
	cd $(BUILD) && ctest $(CTEST_ARGS)

slurm: build
	cd $(BUILD) && ctest $(CTEST_ARGS) -L slurm

asan:
	cmake -S . -B $(BUILD_ASAN) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug \
	      -DCONVGPU_SANITIZE=address,undefined
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0 \
	      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest $(CTEST_ARGS)

tsan:
	cmake -S . -B $(BUILD_TSAN) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug \
	      -DCONVGPU_SANITIZE=thread
	cmake --build $(BUILD_TSAN) -j $(JOBS)
	cd $(BUILD_TSAN) && ctest $(CTEST_ARGS) -L tsan

fuzz:
	CC=clang cmake -S . -B $(BUILD_FUZZ) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug \
	      -DCONVGPU_FUZZ=ON
	cmake --build $(BUILD_FUZZ) -j $(JOBS)
	cd $(BUILD_FUZZ) && ctest $(CTEST_ARGS) -L fuzz

# The README's test command: every configuration CI runs. Each stage runs even when an earlier
# one failed (one flaky test must not hide what the sanitizers say); non-zero if any failed.
check: deps
	@scripts/check-stages.sh "$(MAKE)" test asan tsan fuzz package

# The plain tests on a busy machine (two busy loops beside them, stopped however the run ends):
# no test may depend on how fast the machine is.
check-load: build
	@scripts/check-load.sh $(MAKE) test

# The README's demo command: the build packages only.
demo: deps-build
	@$(MAKE) --no-print-directory build
	$(BUILD)/bin/convgpu demo

# make bench records its figures in docs/BENCHMARKS.md (--record); the scripts alone only print.
# k8s-dra.sh skips (exit 77, the reason printed) where the DRA driver was not built (gRPC).
bench: deps build
	bench/run-all.sh --record $(BUILD)
	bench/compute.sh --record $(BUILD)
	bench/k8s-dra.sh $(BUILD) --record || [ $$? = 77 ] # 77: skipped, the reason printed

# make install PREFIX=/usr/local DESTDIR=/tmp/stage
PREFIX ?= /usr/local
install: build
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(BUILD) -j $(JOBS)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)

# The Debian 12 packages (debian/), built by dpkg-buildpackage through debhelper; the .debs and
# the .changes/.buildinfo end up in $(BUILD_DEB)/ instead of dpkg-buildpackage's ../.
BUILD_DEB ?= build-deb
deb: deps
	@packaging/build-deb.sh $(BUILD_DEB) $(JOBS)

# The next version's packages (this tree, versions bumped), for the upgrade test: build-deb-next/.
BUILD_DEB_NEXT ?= build-deb-next
deb-next: deps
	@CONVGPU_DEB_NEXT=1 packaging/build-deb.sh $(BUILD_DEB_NEXT) $(JOBS)

# The packages installed, run and purged in a fresh Debian 12 root (tests/package; root).
package: deb deb-next build
	cd $(BUILD) && CONVGPU_DEB_DIR=$(abspath $(BUILD_DEB)) \
	    CONVGPU_DEB_NEXT_DIR=$(abspath $(BUILD_DEB_NEXT)) ctest --output-on-failure -L package

# The DaemonSet's node image from the packages: $(BUILD_DEB)/image/convgpu-node-{rootfs,image}.tar.
image: deb
	packaging/image/build-image.sh $(BUILD_DEB) $(BUILD_DEB)/image

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_FUZZ)
