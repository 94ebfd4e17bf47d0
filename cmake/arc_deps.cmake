# Dependencies from Debian 12 packages (tools/setup.sh installs them).
find_package(Threads REQUIRED)

# CAF 0.17.6 ships no CMake package: import it by hand.
find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
add_library(CAF::core UNKNOWN IMPORTED)
set_target_properties(CAF::core PROPERTIES
  IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
  INTERFACE_COMPILE_DEFINITIONS "CAF_ENABLE_TYPE_ID_CHECKS"
  INTERFACE_LINK_LIBRARIES Threads::Threads)
# The network layer (remote workers, eval/remote_worker.h and eval/remote_evaluator.h).
find_library(CAF_IO_LIBRARY caf_io REQUIRED)
add_library(CAF::io UNKNOWN IMPORTED)
set_target_properties(CAF::io PROPERTIES
  IMPORTED_LOCATION "${CAF_IO_LIBRARY}"
  INTERFACE_LINK_LIBRARIES CAF::core)

# RocksDB: link the static archive with the static codecs it was built with.
find_library(ROCKSDB_STATIC librocksdb.a REQUIRED)
find_path(ROCKSDB_INCLUDE_DIR rocksdb/db.h REQUIRED)
find_library(SNAPPY_STATIC libsnappy.a REQUIRED)
find_library(LZ4_STATIC liblz4.a REQUIRED)
find_library(ZSTD_STATIC libzstd.a REQUIRED)
find_library(BZ2_STATIC libbz2.a REQUIRED)
find_library(Z_STATIC libz.a REQUIRED)
add_library(arc_rocksdb INTERFACE)
target_include_directories(arc_rocksdb SYSTEM INTERFACE ${ROCKSDB_INCLUDE_DIR})
target_link_libraries(arc_rocksdb INTERFACE ${ROCKSDB_STATIC} ${SNAPPY_STATIC} ${LZ4_STATIC}
  ${ZSTD_STATIC} ${BZ2_STATIC} ${Z_STATIC} Threads::Threads dl)

find_package(FlatBuffers CONFIG REQUIRED)
find_program(FLATC flatc REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(OpenSSL REQUIRED)  # SHA-256 for content addresses
find_path(TOMLPP_INCLUDE_DIR toml++/toml.h REQUIRED)
add_library(arc_toml INTERFACE)
target_include_directories(arc_toml SYSTEM INTERFACE ${TOMLPP_INCLUDE_DIR})
find_package(GTest CONFIG REQUIRED)
include(GoogleTest)

# cpp-httplib (llm agents): Debian builds it as a shared library with OpenSSL, zlib and brotli
# support; the same defines must be set here, since they change the classes' layout.
find_path(HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
find_library(HTTPLIB_LIBRARY cpp-httplib REQUIRED)
add_library(arc_httplib INTERFACE)
target_include_directories(arc_httplib SYSTEM INTERFACE ${HTTPLIB_INCLUDE_DIR})
target_compile_definitions(arc_httplib INTERFACE CPPHTTPLIB_OPENSSL_SUPPORT
  CPPHTTPLIB_ZLIB_SUPPORT CPPHTTPLIB_BROTLI_SUPPORT)
target_link_libraries(arc_httplib INTERFACE ${HTTPLIB_LIBRARY} OpenSSL::SSL OpenSSL::Crypto
  Threads::Threads)

# libseccomp (candidate confinement, eval/candidate_confinement.h): the static archive, so the
# worker binary carried to a GPU machine needs no libseccomp there.
find_path(SECCOMP_INCLUDE_DIR seccomp.h REQUIRED)
find_library(SECCOMP_STATIC libseccomp.a REQUIRED)
add_library(arc_seccomp INTERFACE)
target_include_directories(arc_seccomp SYSTEM INTERFACE ${SECCOMP_INCLUDE_DIR})
target_link_libraries(arc_seccomp INTERFACE ${SECCOMP_STATIC})
