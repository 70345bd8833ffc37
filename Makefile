# kite: `make` = dependency check + gen + build; `make test`; `make bench`.
# Generated kernels live in out/ (committed); everything built goes to build/.

CUDA_HOME ?= /usr/local/cuda
NVCC := $(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(CUDA_HOME)/bin/nvcc))
CUDA_INC := $(patsubst %/bin/nvcc,%/include,$(NVCC))
CUDA_LIB := $(patsubst %/bin/nvcc,%/lib64,$(NVCC))
CC ?= cc
ARCH := -gencode=arch=compute_90a,code=sm_90a
NVCCFLAGS := -O3 -std=c++17 $(ARCH) -Xcompiler -fPIC -Iruntime -Xptxas -v
CFLAGS := -O2 -std=c11 -Wall -Wextra -Werror -fPIC -Iruntime -I$(CUDA_INC)
LDLIBS := -L$(CUDA_LIB) -Wl,-rpath,$(CUDA_LIB) -lcudart -lm -lpthread
KITE_ONLY ?=
DEB_PACKAGES := liblua5.4-dev check pkg-config

include gen/gen.mk

.PHONY: all deps gen build test bench tune clean
all: deps
	@$(MAKE) --no-print-directory gen
	@$(MAKE) --no-print-directory build

# Debian packages: installed when run as root, else the one line to run.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "kite: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "kite: missing Debian packages; run: sudo apt-get install -y$$missing"; exit 1; fi; \
	fi
	@if [ -z "$(NVCC)" ]; then echo "kite: nvcc not found on PATH or in $(CUDA_HOME)/bin;" \
	  "install the CUDA toolkit (12.0 or newer, for sm_90a) or set CUDA_HOME"; exit 1; fi

gen: $(KITE_GEN)
	$(KITE_GEN) -t templates -o out $(if $(KITE_ONLY),--only '$(KITE_ONLY)')

# ---- the library: out/ + runtime/ ------------------------------------------
KERNEL_SRC := $(sort $(wildcard out/*/*.cu))
KERNEL_OBJ := $(patsubst out/%.cu,build/obj/%.o,$(KERNEL_SRC))
RUNTIME_SRC := $(sort $(wildcard runtime/*.c))
RUNTIME_OBJ := $(patsubst runtime/%.c,build/obj/runtime/%.o,$(RUNTIME_SRC)) build/obj/kite_table.o
RUNTIME_HDR := $(wildcard runtime/*.h)

build: build/libkite.a build/libkite.so

# ptxas's resource report (registers, spills) is kept beside each object.
build/obj/%.o: out/%.cu $(RUNTIME_HDR)
	@mkdir -p $(dir $@)
	@echo "NVCC $<"
	@$(NVCC) $(NVCCFLAGS) -c $< -o $@ 2> $@.log || { cat $@.log; exit 1; }

build/obj/runtime/%.o: runtime/%.c $(RUNTIME_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

build/obj/kite_table.o: out/kite_table.c $(RUNTIME_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

build/libkite.a: $(KERNEL_OBJ) $(RUNTIME_OBJ)
	@rm -f $@
	ar rcs $@ $^

build/libkite.so: $(KERNEL_OBJ) $(RUNTIME_OBJ)
	$(NVCC) $(ARCH) -shared -cudart shared -o $@ $^

# ---- tests and benchmarks ---------------------------------------------------
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
TEST_BINS := build/test_runtime build/test_gpu

build/test_%: tests/test_%.c tests/kite_test.h build/libkite.a
	$(CC) $(CFLAGS) -Itests $< -o $@ build/libkite.a $(CHECK_LIBS) $(LDLIBS)

test: all $(KITE_GEN) build/test_gen $(TEST_BINS)
	@bash tests/run.sh build/test_gen $(TEST_BINS)

build/kite-bench: bench/kite_bench.c build/libkite.a
	$(CC) $(CFLAGS) $< -o $@ build/libkite.a $(LDLIBS) -lcublasLt

bench: all build/kite-bench
	build/kite-bench

clean:
	rm -rf build
