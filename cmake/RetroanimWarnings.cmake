# Warning flags (and the sanitizer option) for retroanim's own targets.
function(retroanim_warnings target)
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wpointer-arith
      $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes -Wmissing-prototypes>)
    if(RETROANIM_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
  if(RETROANIM_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()
