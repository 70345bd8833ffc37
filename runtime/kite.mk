# kite.mk - builds libkite from a kite tree (out/ + runtime/) with nvcc and a
# C compiler alone: no Lua, no kite-gen.  The project's own Makefile uses it,
# and so does a vendored copy:
#
#     KITE_DIR := third_party/kite          # holds out/ and runtime/
#     include $(KITE_DIR)/runtime/kite.mk   # defines $(KITE_LIB_A), $(KITE_LIB_SO)
#     app: app.o $(KITE_LIB_A) ; $(CC) -o $@ $^ $(KITE_LDLIBS)
#
# Settable before the include: KITE_DIR (default: the folder above this file),
# KITE_BUILD (default $(KITE_DIR)/build), CUDA_HOME, CC.

KITE_DIR ?= $(patsubst %/,%,$(dir $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))))
KITE_BUILD ?= $(KITE_DIR)/build
CUDA_HOME ?= /usr/local/cuda
KITE_NVCC := $(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(CUDA_HOME)/bin/nvcc))
# The toolkit root is asked of nvcc itself (its TOP), so a wrapper script or a
# symlink on PATH (/usr/local/bin/nvcc -> /usr/local/cuda-13.0) still finds
# cuda_runtime_api.h and libcudart.
KITE_CUDA := $(if $(KITE_NVCC),$(realpath $(shell $(KITE_NVCC) --dryrun -c kite_probe.cu 2>&1 \
               | sed -n 's/^#[$$] TOP=//p' | head -n 1)))
KITE_CUDA := $(or $(KITE_CUDA),$(patsubst %/bin/nvcc,%,$(KITE_NVCC)))
KITE_ARCH := -gencode=arch=compute_90a,code=sm_90a
KITE_NVCCFLAGS := -O3 -std=c++17 $(KITE_ARCH) -Xcompiler -fPIC -I$(KITE_DIR)/runtime -Xptxas -v
KITE_CFLAGS := -O2 -std=c11 -Wall -Wextra -fPIC -I$(KITE_DIR)/runtime -I$(KITE_CUDA)/include
KITE_LDLIBS := -L$(KITE_CUDA)/lib64 -Wl,-rpath,$(KITE_CUDA)/lib64 -lcudart -lstdc++ -lm -lpthread

KITE_KERNEL_SRC := $(sort $(wildcard $(KITE_DIR)/out/*/*.cu))
KITE_KERNEL_OBJ := $(patsubst $(KITE_DIR)/out/%.cu,$(KITE_BUILD)/obj/%.o,$(KITE_KERNEL_SRC))
KITE_RUNTIME_OBJ := $(patsubst $(KITE_DIR)/runtime/%.c,$(KITE_BUILD)/obj/runtime/%.o, \
                      $(sort $(wildcard $(KITE_DIR)/runtime/*.c))) $(KITE_BUILD)/obj/kite_table.o
KITE_HDR := $(wildcard $(KITE_DIR)/runtime/*.h)
# What a generated kernel includes: a change to the runtime's own headers
# (the table, the internals) recompiles the runtime, not 500 kernels.
KITE_KERNEL_HDR := $(KITE_DIR)/runtime/kite.h $(KITE_DIR)/runtime/kite_launch.h
KITE_LIB_A := $(KITE_BUILD)/libkite.a
KITE_LIB_SO := $(KITE_BUILD)/libkite.so

# ptxas's resource report (registers, spills) is kept beside each object, and
# nvcc's list of the files it read (the kernel's out/include/*.cuh) as $@.d:
# a change to one shared helper rebuilds the kernels that include it.
$(KITE_BUILD)/obj/%.o: $(KITE_DIR)/out/%.cu $(KITE_KERNEL_HDR)
	@mkdir -p $(dir $@)
	@echo "NVCC $<"
	@$(KITE_NVCC) $(KITE_NVCCFLAGS) -MMD -MP -MF $@.d -c $< -o $@ 2> $@.log || { cat $@.log; exit 1; }

-include $(KITE_KERNEL_OBJ:=.d)

$(KITE_BUILD)/obj/runtime/%.o: $(KITE_DIR)/runtime/%.c $(KITE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(KITE_CFLAGS) -c $< -o $@

$(KITE_BUILD)/obj/kite_table.o: $(KITE_DIR)/out/kite_table.c $(KITE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(KITE_CFLAGS) -c $< -o $@

$(KITE_LIB_A): $(KITE_KERNEL_OBJ) $(KITE_RUNTIME_OBJ)
	@rm -f $@
	@echo "AR $@"
	@ar rcs $@ $^

$(KITE_LIB_SO): $(KITE_KERNEL_OBJ) $(KITE_RUNTIME_OBJ)
	@echo "LD $@"
	@$(KITE_NVCC) $(KITE_ARCH) -shared -cudart shared -Xlinker -rpath,$(KITE_CUDA)/lib64 -o $@ $^
