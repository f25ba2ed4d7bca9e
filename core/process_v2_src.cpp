// The compiled part of Boost.Process v2, included in exactly this one file
// (BOOST_PROCESS_V2_SEPARATE_COMPILATION).
#include <boost/process/v2/src.hpp>
