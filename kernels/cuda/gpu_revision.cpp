#include "kernels/cuda/gpu_revision.hpp"

namespace kibench::gpu {

json::Value revision_manifest(const cpu::RevisionFacts &facts) {
  json::Value manifest = cpu::revision_manifest(facts);
  json::Object &spec = manifest.as_object().find("spec")->as_object();
  spec.find("callable")->as_object().set("language", "cuda");
  spec.find("support")->as_object().set("hardwareArchitectures", json::Array{kCompiledArchitecture});
  return manifest;
}

} // namespace kibench::gpu
