# gen/gen.mk - builds kite-gen and its tests.  Include it from the top
# Makefile, or run it alone: make -f gen/gen.mk build/kite-gen build/test_gen
#
# Defines KITE_GEN; everything else is prefixed KG_ so as not to clash.  It
# does not take over the includer's default goal.

KG_PREV_GOAL := $(.DEFAULT_GOAL)

KITE_GEN := build/kite-gen

KG_OPT ?= -O2 -g
KG_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(KG_OPT) \
  -Wall -Wextra -Werror $(shell pkg-config --cflags lua5.4 2>/dev/null)
KG_LIBS := $(shell pkg-config --libs lua5.4 2>/dev/null) -lm
KG_CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
KG_CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

KG_SRCS := $(wildcard gen/kg_*.c)
KG_HDRS := $(wildcard gen/*.h)
KG_OBJS := $(patsubst gen/%.c,build/gen/%.o,$(KG_SRCS))
KG_LIB_OBJS := $(filter-out build/gen/kg_main.o,$(KG_OBJS))

$(KITE_GEN): $(KG_OBJS)
	$(CC) $(KG_OPT) -o $@ $(KG_OBJS) $(KG_LIBS)

build/gen/%.o: gen/%.c $(KG_HDRS)
	@mkdir -p build/gen
	$(CC) $(KG_CFLAGS) -c -o $@ $<

build/test_gen: tests/test_gen.c tests/kt_check.h $(KG_LIB_OBJS) $(KG_HDRS)
	@mkdir -p build
	$(CC) $(KG_CFLAGS) $(KG_CHECK_CFLAGS) -Igen -o $@ tests/test_gen.c \
	  $(KG_LIB_OBJS) $(KG_CHECK_LIBS) $(KG_LIBS)

.PHONY: kite-gen-check
kite-gen-check: build/test_gen
	build/test_gen

.DEFAULT_GOAL := $(KG_PREV_GOAL)
