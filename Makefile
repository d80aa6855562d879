# SPDX-License-Identifier: GPL-2.0
# Out-of-tree build of rdlm.ko against Debian's 6.1 headers.
#
#   make                 build rdlm.ko and rdlm_torture.ko (the API's torture test)
#                        and ocfs2_stack_rdlm.ko (OCFS2 over rdlm)
#   make W=1 / make C=1  extra warnings / sparse, as kbuild defines them
#   make checkpatch      checkpatch.pl --strict on every kernel source
#   make clean
#
# KDIR defaults to the newest installed linux-headers-6.1.*-amd64 (the host
# may run another kernel: the module is for the test cluster's guests).

KDIR ?= $(shell ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null | sort -V | tail -n 1)
CHECKPATCH ?= $(firstword $(wildcard build/linux-source-6.1/scripts/checkpatch.pl))

KERNEL_SOURCES = $(wildcard kernel/*.[ch] kernel/*/*.[ch] include/linux/*.h uapi/linux/*.h)

all: modules

modules:
	@test -n "$(KDIR)" || { echo "no linux-headers-6.1.*-amd64 found; set KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

checkpatch:
	@test -n "$(CHECKPATCH)" || { echo "checkpatch.pl not found: run tools/setup first" >&2; exit 1; }
	$(CHECKPATCH) --strict --no-tree --terse --show-types \
		-f $(KERNEL_SOURCES)

# Not kbuild's M= clean: that deletes every *.ko below this directory, the
# test cluster's guest modules under build/ included.
clean:
	rm -f rdlm.ko rdlm.mod rdlm.mod.c rdlm.o Module.symvers modules.order
	rm -f rdlm_torture.ko rdlm_torture.mod rdlm_torture.mod.c rdlm_torture.o
	rm -f ocfs2_stack_rdlm.ko ocfs2_stack_rdlm.mod ocfs2_stack_rdlm.mod.c ocfs2_stack_rdlm.o
	find . \( -path ./build -o -path ./.git \) -prune -o -type f \( -name '*.o' -o -name '.*.cmd' \
		-o -name '*.d' \) -print | xargs rm -f

.PHONY: all modules checkpatch clean
