#pragma once
// The lifting matrix laid out for hashing ONE row at a time: the block kernels
// (flyhash_kernels.hpp) vectorise across a block of rows, so a lone row costs a whole
// block; these layouts let a kernel vectorise across units instead.
//
// The row is held as bytes (integer rows with values in 0..255, or in −127..127) in a row
// buffer; a *window* is a run of the buffer's bytes that one byte-lookup instruction
// indexes. Units are processed in *batches* of kBatchUnits units. A batch is a sequence of
// *steps*; a step names one window (shared by the batch) and gives every unit of the batch
// a few *slot* bytes: each the position of one of the unit's columns in that window (or a
// pad that reads a zero), with signed lifting also the column's sign. Every column of
// every unit appears in exactly one slot, so a unit's activation is the sum over its
// slots, which a kernel adds in integers: exact in any order, hence the same winners as
// every other kernel (the integer paths compare exact sums).
//
// Two layouts, one per kind of byte lookup (one_row_kernel.hpp says which CPU runs which):
//
// Permute128 (AVX-512 VBMI): the buffer holds 32-byte blocks of 31 columns each, the 32nd
// byte of every block being 0: column c sits at byte 32·⌊c/31⌋ + c mod 31. A window is four
// consecutive blocks (128 bytes), which one vpermi2b indexes with 7 bits, from two 64-byte
// loads. Windows start at any block; so that those loads stay aligned, the buffer holds the
// row twice: at byte 0, and shifted by one block at byte shifted_offset() (a window at an
// odd block reads the shifted copy). Each step gives each unit 4 slots (bits 0–6 the
// position, bit 7 the sign: −1), summed by one vpdpbusd per 16 units.
//
// Shuffle16 (every other SIMD target: SSSE3, SSE4, AVX2, AVX-512 without VBMI, NEON, SVE):
// the buffer holds 16-byte blocks of 15 columns each, the 16th byte of every block being a
// zero. A window is the 16 bytes from the byte of the batch's smallest pending column on
// (any byte: 15 consecutive columns and exactly one zero), which one byte shuffle (pshufb,
// NEON tbl) indexes with 4 bits after one broadcast load. Each step gives each unit 2
// slots, which one multiply-add of byte pairs (pmaddubsw) sums into the unit's 16-bit
// lane: a slot is a position in the window, a pad the position of its zero. Slots are
// 4 bits, packed two to a byte: byte j of a step's 32 holds slot byte j of the step (units
// 0–15) in its low half and slot byte 32 + j (units 16–31) in its high half. With signed
// lifting a unit's first slot takes its next positive column, its second its next negative
// one, and the buffer holds each value + 128 (the zeros as 128): the multiply-add with
// (+1, −1) gives their difference exactly, a pad's 128 cancelling.
//
// Building (once per hasher and layout, on the first small call): units are ordered so
// that a batch holds units whose ascending column lists are alike (recursive median
// splits on the column at the middle slot, then at the quarter slots, …), then each batch
// is scheduled greedily: the window starts at (the block of) the smallest column still
// pending, and every unit takes up to its slots of its next pending columns inside it.
// For random columns Permute128 takes about 1.05 slots per column at the Fashion-MNIST
// paper shape (1.10 at s = 64), i.e. that many bytes per entry of the matrix, against 2
// for the block kernels' 16-bit indices; Shuffle16's smaller windows take about 2 slots (a
// unit has 1.6 of its columns in 15 at that shape), 1 byte, per column, and about 3 with
// signed lifting. Finally the batches are ordered by their number of steps, so that a
// kernel's loop over a batch's steps ends predictably.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "flynn/lifting_matrix.hpp"

namespace flynn::kernels {

/// madvise(MADV_HUGEPAGE) where the system has it; nothing elsewhere (a hint only).
void advise_huge_pages(void* p, std::size_t bytes);

/// Allocates on 64-byte boundaries: a kernel's 64-byte loads of slot bytes then never
/// straddle two cache lines (which cost about a sixth of the one-row kernel's time).
/// Allocations of 2 MiB or more are 2 MiB-aligned whole huge pages, offered to the kernel
/// as transparent huge pages (madvise): the one-row kernel streams ~10 MB of them per row,
/// which in 4 KiB pages is ~2500 TLB misses a row.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return static_cast<T*>(::operator new (bytes, std::align_val_t{64}));
    void* p = ::operator new (huge_bytes(bytes), std::align_val_t{kHugePage});
    advise_huge_pages(p, huge_bytes(bytes));
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return ::operator delete (p, std::align_val_t{64});
    ::operator delete (p, std::align_val_t{kHugePage});
  }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }

 private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static std::size_t huge_bytes(std::size_t bytes) {
    return (bytes + kHugePage - 1) / kHugePage * kHugePage;
  }
};

/// The two layouts (see above); the value indexes OneRowPlanCache.
enum class OneRowLayout : std::uint8_t { Permute128 = 0, Shuffle16 = 1 };
inline constexpr std::size_t kOneRowLayouts = 2;

/// Permute128's geometry: 2 groups of 16 units (one 32-bit lane each) share a window.
struct Permute128 {
  static constexpr std::uint32_t kLanes = 16;
  static constexpr std::uint32_t kGroups = 2;
  static constexpr std::uint32_t kSlots = 4;             ///< bytes per unit and step (vpdpbusd)
  static constexpr std::uint32_t kBlockBytes = 32;       ///< a block of the row buffer
  static constexpr std::uint32_t kBlockColumns = 31;     ///< columns per block (then a 0)
  static constexpr std::uint32_t kWindowBlocks = 4;      ///< 128 bytes
  static constexpr std::uint8_t kPad = 31;               ///< a slot reading its window's first 0
  static constexpr std::uint8_t kNegative = 0x80;        ///< slot bit: the column counts −1
};

/// Shuffle16's geometry: 16-byte windows at any byte, 2 slots of 4 bits per unit and step.
struct Shuffle16 {
  static constexpr std::uint32_t kSlots = 2;          ///< slots per unit and step (pmaddubsw)
  static constexpr std::uint32_t kBlockBytes = 16;    ///< a block of the row buffer
  static constexpr std::uint32_t kBlockColumns = 15;  ///< columns per block (then a 0)
  static constexpr std::uint32_t kWindowBytes = 16;   ///< one 128-bit table
  static constexpr std::uint32_t kStepBytes = 32;     ///< 64 slots of 4 bits
  static constexpr std::uint8_t kSignedBias = 0x80;   ///< signed lifting: a value v is v + 128
};

struct OneRowPlan {
  static constexpr std::uint32_t kBatchUnits = 32;       ///< units of a batch (both layouts)
  static constexpr std::uint32_t kNoUnit = 0xFFFFFFFFu;  ///< a lane past the last unit
  /// Widest byte row: the row buffer stays in L1 beside the streamed slots (and a column
  /// with its sign fits 16 bits while the layout is built).
  static constexpr std::uint32_t kMaxColumns = 500 * Permute128::kBlockColumns;

  OneRowLayout layout = OneRowLayout::Permute128;
  std::uint32_t m = 0;        ///< units
  std::uint32_t s = 0;        ///< columns per unit
  std::uint32_t columns = 0;  ///< columns of the byte row (w for signed lifting, not 2w)
  std::uint32_t blocks = 0;   ///< Permute128: blocks of one copy of the row, zero blocks included
  bool signed_lifting = false;
  std::vector<std::uint32_t> batch_steps;  ///< per batch its first step; one more at the end
  std::vector<std::uint16_t> windows;      ///< per step its window's byte offset in the buffer
  /// per step step_bytes(): Permute128 [group][lane][slot], Shuffle16 packed (see above);
  /// 64-byte aligned
  std::vector<std::uint8_t, CacheLineAllocator<std::uint8_t>> slots;
  std::vector<std::uint32_t> units;  ///< per batch kBatchUnits unit indices (or kNoUnit)

  /// Bytes held (the estimate in model_footprint.cpp bounds this).
  std::size_t bytes() const;
  /// Slots per unit and step.
  std::uint32_t slots_per_unit() const {
    return layout == OneRowLayout::Permute128 ? Permute128::kSlots : Shuffle16::kSlots;
  }
  /// Bytes of one step's slots.
  std::uint32_t step_bytes() const {
    return layout == OneRowLayout::Permute128 ? kBatchUnits * Permute128::kSlots
                                              : Shuffle16::kStepBytes;
  }
  /// Permute128: byte offset of the shifted copy of the row in a row buffer (a multiple of 64).
  std::size_t shifted_offset() const {
    return (std::size_t(blocks) * Permute128::kBlockBytes + 63) / 64 * 64;
  }
  /// Bytes of a row buffer (64-byte aligned, as the kernels read it).
  std::size_t row_bytes() const;
  /// Lays the row's `columns` bytes (in column order) out in a row buffer of row_bytes().
  void lay_out_row(const std::uint8_t* bytes, std::uint8_t* buf) const;
  /// Byte of column c in the row buffer (Permute128: in its unshifted copy).
  std::size_t position(std::uint32_t c) const {
    if (layout == OneRowLayout::Shuffle16)
      return std::size_t(c / Shuffle16::kBlockColumns) * Shuffle16::kBlockBytes +
             c % Shuffle16::kBlockColumns;
    return std::size_t(c / Permute128::kBlockColumns) * Permute128::kBlockBytes +
           c % Permute128::kBlockColumns;
  }
};

/// Builds the plan of `M` in `layout`. With `signed_lifting`, M's columns are those of the
/// mirrored row [e, −e] (2w of them) and fold to w byte columns with a sign. Returns null
/// when the row is wider than kMaxColumns or a batch would exceed plan_steps_bound (random
/// matrices never come near it): the caller then keeps the block kernels.
std::unique_ptr<OneRowPlan> build_one_row_plan(const LiftingMatrix& M, bool signed_lifting,
                                               OneRowLayout layout);

/// Steps a batch may take in `layout`, for s columns per unit among w byte columns.
/// Permute128: 2·⌈s/4⌉ + ⌈w/31⌉ + 2; Shuffle16: 2·s + ⌈w/15⌉ + 2. Dense rows (s ≫
/// w/window) need about s/slots steps (Shuffle16 up to s, with signed lifting when one
/// sign dominates), sparse ones (a unit's few columns spread over the row) about one per
/// window of the row; this allows more than either. A matrix that needs more gets no plan.
std::uint64_t plan_steps_bound(OneRowLayout layout, std::uint64_t s, std::uint64_t w);
/// The most bytes a plan of m units × s columns among w byte columns holds in either layout
/// (saturating; for model_footprint).
std::uint64_t plan_bytes_bound(std::uint64_t m, std::uint64_t s, std::uint64_t w);

/// The plans of one FlyHasher, one per layout, each built once, on the first call that
/// wants it.
struct OneRowPlanCache {  // declared a struct in fly_hasher.hpp
 public:
  /// The plan in `layout` (null when the matrix has none), built now if it was not yet.
  const OneRowPlan* get(const LiftingMatrix& M, bool signed_lifting, OneRowLayout layout) {
    Slot& s = slots_[static_cast<std::size_t>(layout)];
    std::call_once(s.once, [&] {
      s.plan = build_one_row_plan(M, signed_lifting, layout);
      s.built.store(true, std::memory_order_release);
    });
    return s.plan.get();
  }
  /// The plan in `layout` if get() has built it, else null; never builds.
  const OneRowPlan* built_plan(OneRowLayout layout) const {
    const Slot& s = slots_[static_cast<std::size_t>(layout)];
    return s.built.load(std::memory_order_acquire) ? s.plan.get() : nullptr;
  }

 private:
  struct Slot {
    std::once_flag once;
    std::unique_ptr<OneRowPlan> plan;
    std::atomic<bool> built{false};
  };
  std::array<Slot, kOneRowLayouts> slots_;
};

}  // namespace flynn::kernels
