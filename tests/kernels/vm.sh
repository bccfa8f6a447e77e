#!/bin/sh
# tests/kernels/vm.sh KDIR CMD...: runs the shell command CMD in a QEMU guest
# that boots the kernel unpacked in KDIR (tests/kernels/fetch.sh: KDIR/vmlinuz,
# KDIR/lib/modules/VERSION/) and sees this machine's files: its / over 9p,
# read-only, under a tmpfs overlay (what the guest writes stays in the
# guest), with fresh /proc, /sys, /dev, /tmp (but the current directory, if
# it is under /tmp), tracefs and cgroup2.  CMD runs
# as root in the current directory; its output is this script's, and its
# exit status is this script's (125: the guest gave none).
#
# The guest's /tmp/io is a directory of this machine, shared read-write:
# VM_IO names it (it is kept), else a temporary one.  QEMU_ACCEL (default
# tcg: on these machines a KVM guest hangs once its kernel starts), VM_CPUS
# (2), VM_MEM (3G), VM_TIMEOUT (seconds, 2400) override.
set -eu

[ $# -ge 2 ] || { echo "usage: $0 KDIR CMD..." >&2; exit 2; }
kdir=$(cd "$1" && pwd)
shift
ver=$(ls "$kdir/lib/modules")
if [ -n "${VM_IO:-}" ]; then
	io=$(mkdir -p "$VM_IO" && cd "$VM_IO" && pwd)
	rm -f "$io/status"
else
	io=$(mktemp -d /tmp/tr2-vm.XXXXXX)
	trap 'rm -rf "$io"' EXIT
fi

# The initramfs: busybox, the modules that 9p and overlayfs need (with what
# they depend on, decompressed: busybox's insmod reads plain ELF), and init.
initrd=$kdir/initrd.img
if [ ! -s "$initrd" ] || [ "$0" -nt "$initrd" ]; then
	root=$(mktemp -d /tmp/tr2-initrd.XXXXXX)
	mkdir -p "$root/bin" "$root/mod" "$root/proc" "$root/sys" "$root/dev"
	cp /bin/busybox "$root/bin/busybox"
	deps=$kdir/lib/modules/$ver/modules.dep
	: > "$root/mod/order"
	want="virtio_pci 9pnet_virtio 9p overlay"
	# modules.dep names each module's dependencies, nearest first: load
	# them from the end of the list.
	for m in $want; do
		line=$(grep -E "/$m\.ko(\.xz)?:" "$deps" || true)
		[ -n "$line" ] || continue   # built in
		for f in $(echo "$line" | tr -d ':' | awk '{ for (i = NF; i > 1; i--) print $i; print $1 }'); do
			base=$(basename "$f" .xz)
			grep -qx "$base" "$root/mod/order" && continue
			case $f in
			*.xz) xz -dc "$kdir/lib/modules/$ver/$f" > "$root/mod/$base" ;;
			*) cp "$kdir/lib/modules/$ver/$f" "$root/mod/$base" ;;
			esac
			echo "$base" >> "$root/mod/order"
		done
	done
	cat > "$root/init" <<-'EOF'
	#!/bin/busybox sh
	/bin/busybox --install -s /bin
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev
	for m in $(cat /mod/order); do insmod /mod/$m; done
	mkdir -p /host /io /upper /root
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 host /host
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 io /io
	mount -t tmpfs -o size=80% upper /upper
	mkdir -p /upper/u /upper/w
	mount -t overlay -o lowerdir=/host,upperdir=/upper/u,workdir=/upper/w overlay /root
	for d in proc sys dev; do mount --move /$d /root/$d; done
	mount -t tmpfs tmp /root/tmp
	# A tree under /tmp (a clone there) would be hidden by the fresh /tmp:
	# it comes back, under an overlay of its own.
	cwd=$(. /io/env; echo "$VM_CWD")
	case $cwd in /tmp/*)
		mkdir -p /upper/cu /upper/cw "/root$cwd"
		mount -t overlay -o "lowerdir=/host$cwd,upperdir=/upper/cu,workdir=/upper/cw" overlay "/root$cwd" ;;
	esac
	mount -t tmpfs run /root/run
	ln -s /proc/self/fd /root/dev/fd
	for i in 0:stdin 1:stdout 2:stderr; do ln -s /proc/self/fd/${i%:*} /root/dev/${i#*:}; done
	mkdir -p /root/dev/pts /root/dev/shm
	mount -t devpts devpts /root/dev/pts
	mount -t tmpfs shm /root/dev/shm
	mount -t tracefs tracefs /root/sys/kernel/tracing 2> /dev/null
	mount -t cgroup2 cgroup2 /root/sys/fs/cgroup 2> /dev/null
	mkdir -p /root/tmp/io && mount --move /io /root/tmp/io
	hostname tr2-vm
	chroot /root /bin/sh -c '. /tmp/io/env; cd "$VM_CWD" && /bin/sh /tmp/io/cmd > /dev/console 2>&1 < /dev/null; echo $? > /tmp/io/status; sync'
	poweroff -f
	EOF
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc 2> /dev/null | gzip -1) > "$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$root"
fi

printf '%s\n' "$*" > "$io/cmd"
{
	printf 'export VM_CWD=%s\n' "'$(pwd)'"
	printf 'export PATH=%s\n' "'/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'"
	printf 'export HOME=/root LANG=C.UTF-8 TERM=dumb\n'
	# emulated, about ten times slower: the suites' time bounds (tests/lib.sh)
	if [ "${QEMU_ACCEL:-tcg}" = tcg ]; then printf 'export TR2_TEST_SLOW=10\n'; fi
} > "$io/env"

# A guest kernel that locks up (a soft lockup) panics and so ends the guest,
# its stack on the console, rather than hanging the run.
accel=${QEMU_ACCEL:-tcg}
cpu=max
[ "$accel" = kvm ] && cpu=host
# One host thread for all the vCPUs (TCG_THREAD, default single): with a
# thread each, a vCPU could run an int3 that text_poke_bp had already taken
# back (tr2-bpf attaching or detaching a scheduler tracepoint), and 6.1 and
# 6.12 guests locked up or panicked in __schedule within two minutes.
opt=$accel
[ "$accel" = tcg ] && opt=tcg,thread=${TCG_THREAD:-single}
timeout "${VM_TIMEOUT:-2400}" qemu-system-x86_64 -accel "$opt" -cpu "$cpu" -smp "${VM_CPUS:-2}" \
	-m "${VM_MEM:-3G}" -kernel "$kdir/vmlinuz" -initrd "$initrd" \
	-append "console=ttyS0 quiet loglevel=5 panic=-1 oops=panic softlockup_panic=1" \
	-nographic -no-reboot -nodefaults -serial stdio \
	-fsdev local,id=host,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=host,mount_tag=host \
	-fsdev local,id=io,path="$io",security_model=none \
	-device virtio-9p-pci,fsdev=io,mount_tag=io < /dev/null |
	sed -u 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g; s/\r//g' || true
status=$(cat "$io/status" 2> /dev/null || echo 125)
exit "$status"
