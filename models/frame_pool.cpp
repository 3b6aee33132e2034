#include "models/frame_pool.h"

#include <memory>
#include <mutex>
#include <vector>

namespace slubsim::detail {

void* frame_chunk() {
  static std::mutex mu;
  static std::vector<std::unique_ptr<std::byte[]>> chunks;
  std::lock_guard<std::mutex> g(mu);
  chunks.push_back(std::make_unique<std::byte[]>(kFrameChunk));
  return chunks.back().get();
}

}  // namespace slubsim::detail
