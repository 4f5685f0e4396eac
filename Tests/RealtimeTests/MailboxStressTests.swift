import Realtime
import Synchronization
import Testing

/// A writer thread publishes uniform snapshots (every element equal to the version) as fast as
/// it can; a reader thread checks that each snapshot is uniform and that versions never go
/// backwards. Run under ThreadSanitizer with `swift test --sanitize=thread --filter MailboxStress`.
@Suite("MailboxStress")
struct MailboxStress {
    final class Outcome: Sendable {
        let snapshotsRead = Atomic<Int>(0)
        let freshSnapshots = Atomic<Int>(0)
        let lastVersion = Atomic<Int>(0)
        let tornSnapshots = Atomic<Int>(0)
        let wrongOrder = Atomic<Int>(0)
    }

    @Test("snapshots are never torn and versions never go backwards")
    func uniformAndMonotonic() async {
        let versions = 300_000
        let mailbox = LatestValueMailbox<Int>(count: 48, initial: 0)
        let writer = mailbox.writer
        let reader = mailbox.reader
        let outcome = Outcome()

        await runOnThreads([
            {
                for version in 1 ... versions { Self.publish(writer, version: version) }
            },
            {
                var last = 0
                var reads = 0
                var fresh = 0
                var torn = 0
                var wrongOrder = 0
                while last < versions {
                    let (version, isUniform, isFresh) = Self.read(reader)
                    if !isUniform { torn += 1 }
                    // Fresh means a newer publish; not fresh means the same snapshot again.
                    if isFresh ? version <= last : version != last { wrongOrder += 1 }
                    last = version
                    reads += 1
                    if isFresh { fresh += 1 } else { yieldProcessor() }
                }
                outcome.snapshotsRead.store(reads, ordering: .relaxed)
                outcome.freshSnapshots.store(fresh, ordering: .relaxed)
                outcome.lastVersion.store(last, ordering: .relaxed)
                outcome.tornSnapshots.store(torn, ordering: .relaxed)
                outcome.wrongOrder.store(wrongOrder, ordering: .relaxed)
            },
        ])

        #expect(outcome.tornSnapshots.load(ordering: .relaxed) == 0)
        #expect(outcome.wrongOrder.load(ordering: .relaxed) == 0)
        #expect(outcome.lastVersion.load(ordering: .relaxed) == versions)
        #expect(outcome.freshSnapshots.load(ordering: .relaxed) > 1)
        withExtendedLifetime(mailbox) {}
    }

    // `@_noLocks @_noAllocation` as in a realtime kernel; this also specializes the mailbox code
    // into this module in debug builds, where ThreadSanitizer instruments it (see RingStress).

    @_noLocks @_noAllocation
    static func publish(_ writer: LatestValueMailbox<Int>.Writer, version: Int) {
        let buffer = writer.writeBuffer()
        for index in 0 ..< buffer.count { buffer[index] = version }
        writer.publish()
    }

    /// The latest snapshot's version (its first element), whether all its elements are equal,
    /// and whether it was fresh.
    @_noLocks @_noAllocation
    static func read(_ reader: LatestValueMailbox<Int>.Reader) -> (version: Int, isUniform: Bool, isFresh: Bool) {
        let (snapshot, isFresh) = reader.readLatest()
        let version = snapshot[0]
        for index in 1 ..< snapshot.count where snapshot[index] != version {
            return (version, false, isFresh)
        }
        return (version, true, isFresh)
    }
}
