#!/bin/bash
# slurm.sh up DIR | down DIR: a throw-away one-node Slurm cluster for the
# launcher tests (Debian's slurm-wlm and munge, no systemd), with its state,
# logs and pid files in DIR.
#
# up: starts munged (unless one answers already), writes /etc/slurm/slurm.conf
# (refusing to replace one this script did not write), starts slurmctld -c
# and slurmd, and waits until `srun -n 1 true` runs. The node advertises at
# least 8 CPUs (SlurmdParameters=config_overrides), so that srun -n 4 runs on
# a 2-CPU machine without --overcommit.
# down: stops exactly the daemons `up` started (by the pid files in DIR) and
# removes the slurm.conf it wrote.
set -euo pipefail

cmd=${1:?usage: slurm.sh up|down DIR}
dir=${2:?usage: slurm.sh up|down DIR}
conf=/etc/slurm/slurm.conf
mark="# written by gocoll's cmd/gocoll/testdata/slurm.sh"

die() { echo "slurm.sh: $*" >&2; exit 1; }

# alive PIDFILE NAME: the pid in PIDFILE is a live process called NAME.
alive() {
	local pid
	[ -s "$1" ] || return 1
	pid=$(cat "$1")
	[ -r "/proc/$pid/stat" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] &&
		[ "$(awk '{print $3}' "/proc/$pid/stat")" != Z ]
}

stop() { # stop PIDFILE NAME
	local pid i
	alive "$1" "$2" || { rm -f "$1"; return 0; }
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || true
	for i in $(seq 100); do alive "$1" "$2" || break; sleep 0.1; done
	alive "$1" "$2" && kill -9 "$pid" 2>/dev/null || true
	rm -f "$1"
}

up() {
	[ "$(id -u)" = 0 ] || die "must run as root"
	mkdir -p "$dir"/state "$dir"/spool "$dir"/log
	if [ ! -s /etc/munge/munge.key ]; then
		runuser -u munge -- mungekey --create --keyfile=/etc/munge/munge.key
	fi
	if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
		install -d -o munge -g munge -m 0755 /run/munge
		runuser -u munge -- /usr/sbin/munged --force
		for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
		munge -n | unmunge >/dev/null || die "munged does not answer"
		cp /run/munge/munged.pid "$dir/munged.pid"
	fi
	if [ -e "$conf" ] && ! head -n 1 "$conf" | grep -qF "$mark"; then
		die "$conf exists and was not written by this script"
	fi
	local host cpus
	host=$(hostname -s)
	cpus=$(nproc)
	[ "$cpus" -ge 8 ] || cpus=8
	mkdir -p /etc/slurm
	cat >"$conf" <<EOF
$mark
ClusterName=gocolltest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
	/usr/sbin/slurmctld -c
	for _ in $(seq 100); do alive "$dir/slurmctld.pid" slurmctld && break; sleep 0.1; done
	alive "$dir/slurmctld.pid" slurmctld || die "slurmctld did not start: $(tail -n 5 "$dir/log/slurmctld.log" 2>/dev/null)"
	/usr/sbin/slurmd -N "$host"
	for _ in $(seq 100); do alive "$dir/slurmd.pid" slurmd && break; sleep 0.1; done
	alive "$dir/slurmd.pid" slurmd || die "slurmd did not start: $(tail -n 5 "$dir/log/slurmd.log" 2>/dev/null)"
	local t0=$SECONDS resumed=
	until timeout 15 srun --immediate=5 -n 1 -t 1 true 2>/dev/null; do
		case "$(sinfo -h -N -n "$host" -o %T 2>/dev/null || true)" in
		*drain* | *down* | *inval*)
			[ -n "$resumed" ] || scontrol update nodename="$host" state=resume || true
			resumed=1 ;;
		esac
		[ $((SECONDS - t0)) -lt 60 ] || die "srun -n 1 true still fails after 60 s"
		sleep 0.3
	done
}

down() {
	stop "$dir/slurmd.pid" slurmd
	stop "$dir/slurmctld.pid" slurmctld
	stop "$dir/munged.pid" munged
	if [ -e "$conf" ] && head -n 1 "$conf" | grep -qF "$mark"; then
		rm -f "$conf"
	fi
}

case "$cmd" in
up) up ;;
down) down ;;
*) die "unknown command $cmd (want up or down)" ;;
esac
