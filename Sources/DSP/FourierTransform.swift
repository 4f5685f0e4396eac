// The one file that calls FFTW: the planner lock, the delay estimator's complex transform and
// the noise suppressor's real transform. Plans are made and freed off the realtime thread.

import CFFTW
import Synchronization

/// FFTW's planner is not thread-safe (only `fftw_execute*` is): every plan in this module is
/// made and destroyed under this lock.
let fftwPlannerLock = Mutex<Void>(())

/// A complex FFT of one size, in Double, on split real and imaginary arrays, through FFTW.
/// Forward is X_k = Σ x_n·e^{−2πikn/N}; inverse uses e^{+…} without the 1/N. Not for the
/// realtime thread (it copies through its own aligned buffers); one thread at a time.
final class FourierTransform: @unchecked Sendable {
    let size: Int
    private let real: UnsafeMutablePointer<Double>
    private let imaginary: UnsafeMutablePointer<Double>
    private let forwardPlan: OpaquePointer
    private let inversePlan: OpaquePointer

    init(size: Int) {
        precondition(size >= 2, "FFT size must be at least 2")
        self.size = size
        // SAFETY: fftw_malloc returns SIMD-aligned memory of the size asked for (nil only when
        // memory is exhausted, which traps here).
        real = fftw_malloc(size * MemoryLayout<Double>.stride)!.bindMemory(to: Double.self, capacity: size)
        imaginary = fftw_malloc(size * MemoryLayout<Double>.stride)!.bindMemory(to: Double.self, capacity: size)
        real.initialize(repeating: 0, count: size)
        imaginary.initialize(repeating: 0, count: size)
        let re = Int(bitPattern: real)
        let im = Int(bitPattern: imaginary)
        let n = Int32(size)
        // In-place split-array plans on the own buffers. The inverse is the forward transform
        // with the real and imaginary arrays swapped: a plan of its own, because FFTW's new-array
        // execute requires the same ii − ri separation as the plan was made with.
        let addresses = fftwPlannerLock.withLock { _ -> (Int, Int) in
            var dimension = fftw_iodim(n: n, is: 1, os: 1)
            let r = UnsafeMutablePointer<Double>(bitPattern: re)
            let i = UnsafeMutablePointer<Double>(bitPattern: im)
            return (
                Int(bitPattern: fftw_plan_guru_split_dft(1, &dimension, 0, nil, r, i, r, i, UInt32(FFTW_ESTIMATE))),
                Int(bitPattern: fftw_plan_guru_split_dft(1, &dimension, 0, nil, i, r, i, r, UInt32(FFTW_ESTIMATE)))
            )
        }
        forwardPlan = OpaquePointer(bitPattern: addresses.0)!
        inversePlan = OpaquePointer(bitPattern: addresses.1)!
    }

    deinit {
        let addresses = (Int(bitPattern: forwardPlan), Int(bitPattern: inversePlan))
        fftwPlannerLock.withLock { _ in
            fftw_destroy_plan(OpaquePointer(bitPattern: addresses.0))
            fftw_destroy_plan(OpaquePointer(bitPattern: addresses.1))
        }
        fftw_free(real)
        fftw_free(imaginary)
    }

    /// Transforms `re`/`im` (`size` values each) in place.
    func transform(_ re: UnsafeMutablePointer<Double>, _ im: UnsafeMutablePointer<Double>, inverse: Bool) {
        real.update(from: re, count: size)
        imaginary.update(from: im, count: size)
        fftw_execute(inverse ? inversePlan : forwardPlan)
        re.update(from: real, count: size)
        im.update(from: imaginary, count: size)
    }
}

/// One bin of a complex spectrum, (re, im): FFTW's `fftwf_complex`.
public typealias SpectrumBin = (Float, Float)

/// SIMD-aligned buffers for `RealFourierTransform` (`fftwf_malloc`), zeroed. Made and freed off
/// the realtime thread.
enum AlignedBuffer {
    /// `count` floats. Traps only when memory is exhausted, before anything runs.
    static func floats(_ count: Int) -> UnsafeMutablePointer<Float> {
        // SAFETY: fftwf_malloc returns SIMD-aligned memory of the byte size asked for.
        let pointer = fftwf_malloc(count * MemoryLayout<Float>.stride)!.bindMemory(to: Float.self, capacity: count)
        pointer.initialize(repeating: 0, count: count)
        return pointer
    }

    /// `count` spectrum bins.
    static func bins(_ count: Int) -> UnsafeMutablePointer<SpectrumBin> {
        // SAFETY: as for floats; fftwf_complex is two floats.
        let pointer = fftwf_malloc(count * MemoryLayout<SpectrumBin>.stride)!
            .bindMemory(to: SpectrumBin.self, capacity: count)
        pointer.initialize(repeating: (0, 0), count: count)
        return pointer
    }

    /// Frees a buffer made here.
    static func free<Element>(_ pointer: UnsafeMutablePointer<Element>) { fftwf_free(pointer) }
}

/// A real-input FFT of one size in single precision: forward r2c (`size / 2 + 1` bins), inverse
/// c2r without the 1/N. The plans are made with FFTW_ESTIMATE (the same plan, so the same
/// rounding, every time) on buffers from `AlignedBuffer`, and may be executed on any buffers made
/// there. A plain value of two plan pointers, so a realtime kernel can hold it; `destroy()` once,
/// off the realtime thread.
public struct RealFourierTransform: BitwiseCopyable {
    public let size: Int
    private let forwardPlan: OpaquePointer
    private let inversePlan: OpaquePointer

    /// Plans for `size` samples; nil when FFTW refuses. `input`/`spectrum`/`output` are
    /// representative buffers (the inverse plan may overwrite its spectrum). Not the realtime thread.
    init?(
        size: Int, input: UnsafeMutablePointer<Float>, spectrum: UnsafeMutablePointer<SpectrumBin>,
        output: UnsafeMutablePointer<Float>
    ) {
        let addresses = (Int(bitPattern: input), Int(bitPattern: spectrum), Int(bitPattern: output))
        // Buffers and plans cross the lock as addresses: pointers are not Sendable.
        let plans = fftwPlannerLock.withLock { _ -> (Int, Int) in
            let input = UnsafeMutablePointer<Float>(bitPattern: addresses.0)
            let spectrum = UnsafeMutablePointer<SpectrumBin>(bitPattern: addresses.1)
            let output = UnsafeMutablePointer<Float>(bitPattern: addresses.2)
            let forward = fftwf_plan_dft_r2c_1d(Int32(size), input, spectrum, UInt32(FFTW_ESTIMATE))
            let inverse = fftwf_plan_dft_c2r_1d(
                Int32(size), spectrum, output, UInt32(FFTW_ESTIMATE | FFTW_DESTROY_INPUT))
            return (Int(bitPattern: forward), Int(bitPattern: inverse))
        }
        guard let forward = OpaquePointer(bitPattern: plans.0), let inverse = OpaquePointer(bitPattern: plans.1) else {
            fftwPlannerLock.withLock { _ in
                if let plan = OpaquePointer(bitPattern: plans.0) { fftwf_destroy_plan(plan) }
                if let plan = OpaquePointer(bitPattern: plans.1) { fftwf_destroy_plan(plan) }
            }
            return nil
        }
        self.size = size
        forwardPlan = forward
        inversePlan = inverse
    }

    /// Frees the plans. Once, off the realtime thread, after the last transform.
    func destroy() {
        let plans = (Int(bitPattern: forwardPlan), Int(bitPattern: inversePlan))
        fftwPlannerLock.withLock { _ in
            fftwf_destroy_plan(OpaquePointer(bitPattern: plans.0))
            fftwf_destroy_plan(OpaquePointer(bitPattern: plans.1))
        }
    }

    /// `size` samples in, `size / 2 + 1` bins out. Realtime-safe.
    @_noLocks @_noAllocation
    func forward(_ input: UnsafeMutablePointer<Float>, into spectrum: UnsafeMutablePointer<SpectrumBin>) {
        // SAFETY: the plan was made for this size on AlignedBuffer memory like these arrays;
        // executing a made plan neither allocates nor locks.
        _unsafePerformance { fftwf_execute_dft_r2c(forwardPlan, input, spectrum) }
    }

    /// `size / 2 + 1` bins in (overwritten), `size` samples out, not scaled by 1/N. Realtime-safe.
    @_noLocks @_noAllocation
    func inverse(_ spectrum: UnsafeMutablePointer<SpectrumBin>, into output: UnsafeMutablePointer<Float>) {
        // SAFETY: as in forward.
        _unsafePerformance { fftwf_execute_dft_c2r(inversePlan, spectrum, output) }
    }
}
