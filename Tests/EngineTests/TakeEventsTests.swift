// The take's event log, the file timeline's mapping of take frames to file frames, and the
// request queue of a running recorder.

import Engine
import Testing

@Suite struct TakeEventsTests {
    @Test func fileTimelineMapsTakeFramesAcrossAPause() {
        var timeline = FileTimeline()
        timeline.append(takeFrame: 100, count: 50)
        timeline.append(takeFrame: 150, count: 10)  // contiguous: the same span
        timeline.append(takeFrame: 400, count: 40)  // after a pause from 160 to 400
        #expect(timeline.spans.count == 2)
        #expect(timeline.frameCount == 100)
        #expect(timeline.fileFrame(ofTakeFrame: 100) == 0)
        #expect(timeline.fileFrame(ofTakeFrame: 159) == 59)
        #expect(timeline.fileFrame(ofTakeFrame: 160) == 60)  // the pause's place: the frame after the span
        #expect(timeline.fileFrame(ofTakeFrame: 200) == nil)  // paused: not in the file
        #expect(timeline.fileFrame(ofTakeFrame: 400) == 60)
        #expect(timeline.fileFrame(ofTakeFrame: 439) == 99)
        #expect(timeline.fileFrame(ofTakeFrame: 99) == nil)
        #expect(timeline.takeRange == 100 ..< 440)
        timeline.append(takeFrame: 500, count: 0)
        #expect(timeline.spans.count == 2)
    }

    @Test func eventLogKeepsOrderAndCountsWhatDoesNotFit() {
        let log = TakeEventLog(limit: 3)
        log.append(TakeEvent(.mark, at: 30))
        log.append(TakeEvent(.drop, at: 10, frameCount: 256))
        log.append(TakeEvent(.clip, at: 20, channel: 1))
        log.append(TakeEvent(.mark, at: 40))
        #expect(log.events.map(\.takeFrame) == [30, 10, 20])
        #expect(log.eventsNotKept == 1)
        #expect(log.events(in: 0 ..< 30).map(\.kind) == [.drop, .clip])
    }

    @Test func controlQueueHandsRequestsOverOnceInOrder() {
        let control = TakeControl()
        control.post(TakeRequest(.pause, at: 480))
        control.post(TakeRequest(.mark, at: 960, label: "verse"))
        control.post(TakeRequest(.resume, at: 1440))
        let taken = control.takeAll()
        #expect(taken.map(\.kind) == [.pause, .mark, .resume])
        #expect(taken[1].label == "verse")
        #expect(control.takeAll().isEmpty)
    }
}
