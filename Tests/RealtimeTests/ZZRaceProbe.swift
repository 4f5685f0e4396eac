import Testing
import Foundation
import Synchronization

@Suite("ProbeStress") struct ProbeStress {
    final class Box: @unchecked Sendable { let p = UnsafeMutablePointer<Int>.allocate(capacity: 1); var x = 0 }
    @Test func race() async {
        let box = Box()
        box.p.initialize(to: 0)
        await runOnThreads([
            { for i in 0..<1000000 { box.p.pointee = i; box.x = i } },
            { for i in 0..<1000000 { box.p.pointee = -i; box.x = -i } },
        ])
    }
    @Test func raceSync() {
        let box = Box()
        let t = Thread { for i in 0..<1000000 { box.x = i } }
        t.start()
        for i in 0..<1000000 { box.x = -i }
        sleep(1)
    }
}
