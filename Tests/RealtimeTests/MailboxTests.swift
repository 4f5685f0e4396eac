import Realtime
import Testing

@Suite("Latest-value mailbox")
struct MailboxTests {
    /// Fills the writer's back slot with `value` and publishes it.
    func publish(_ mailbox: LatestValueMailbox<Int>, _ value: Int) {
        let buffer = mailbox.writeBuffer()
        for index in buffer.indices { buffer[index] = value }
        mailbox.publish()
    }

    func read(_ mailbox: LatestValueMailbox<Int>) -> (values: [Int], isFresh: Bool) {
        let (snapshot, isFresh) = mailbox.readLatest()
        return (Array(snapshot), isFresh)
    }

    @Test("before any publish the reader sees the initial value, not fresh")
    func initialValue() {
        let mailbox = LatestValueMailbox<Int>(count: 4, initial: 7)
        #expect(mailbox.count == 4)
        #expect(read(mailbox) == ([7, 7, 7, 7], false))
        #expect(mailbox.writeBuffer().count == 4)
    }

    @Test("a publish is read once as fresh, then again as not fresh")
    func freshOnce() {
        let mailbox = LatestValueMailbox<Int>(count: 3, initial: 0)
        publish(mailbox, 1)
        #expect(read(mailbox) == ([1, 1, 1], true))
        #expect(read(mailbox) == ([1, 1, 1], false))
        publish(mailbox, 2)
        #expect(read(mailbox) == ([2, 2, 2], true))
    }

    @Test("the latest publish wins over earlier unread ones")
    func latestWins() {
        let mailbox = LatestValueMailbox<Int>(count: 5, initial: 0)
        for value in 1 ... 10 { publish(mailbox, value) }
        #expect(read(mailbox) == ([10, 10, 10, 10, 10], true))
        #expect(read(mailbox) == ([10, 10, 10, 10, 10], false))
    }

    @Test("a snapshot being read is never the writer's back slot, and stays intact while the writer goes on")
    func nothingTorn() {
        let mailbox = LatestValueMailbox<Int>(count: 8, initial: 0)
        for round in 1 ... 50 {
            publish(mailbox, round)
            let (snapshot, isFresh) = mailbox.readLatest()
            #expect(isFresh)
            // The writer keeps writing (without publishing, then publishing) while the reader holds `snapshot`.
            for extra in 1 ... 3 {
                #expect(UnsafePointer(mailbox.writeBuffer().baseAddress) != snapshot.baseAddress)
                publish(mailbox, 1000 * round + extra)
            }
            #expect(snapshot.allSatisfy { $0 == round })
            #expect(read(mailbox) == (Array(repeating: 1000 * round + 3, count: 8), true))
        }
    }

    @Test("a writer that writes without publishing shows the reader nothing new")
    func unpublishedWritesInvisible() {
        let mailbox = LatestValueMailbox<Int>(count: 2, initial: 0)
        publish(mailbox, 1)
        _ = read(mailbox)
        let buffer = mailbox.writeBuffer()
        buffer[0] = 99
        buffer[1] = 99
        #expect(read(mailbox) == ([1, 1], false))
    }

    @Test("two-field struct snapshots through the writer and reader views")
    func structSnapshots() {
        struct Level: BitwiseCopyable, Equatable {
            var peak: Float
            var sumOfSquares: Float
        }
        let mailbox = LatestValueMailbox<Level>(count: 2, initial: Level(peak: 0, sumOfSquares: 0))
        let writer = mailbox.writer
        let reader = mailbox.reader
        let back = writer.writeBuffer()
        back[0] = Level(peak: 0.5, sumOfSquares: 2)
        back[1] = Level(peak: 0.25, sumOfSquares: 1)
        writer.publish()
        let (snapshot, isFresh) = reader.readLatest()
        #expect(isFresh)
        #expect(Array(snapshot) == [Level(peak: 0.5, sumOfSquares: 2), Level(peak: 0.25, sumOfSquares: 1)])
    }

    @Test("count 0 is allowed: only the fresh flag carries information")
    func emptySnapshots() {
        let mailbox = LatestValueMailbox<Int>(count: 0, initial: 0)
        #expect(mailbox.writeBuffer().isEmpty)
        mailbox.publish()
        #expect(read(mailbox) == ([], true))
        #expect(read(mailbox) == ([], false))
    }
}
