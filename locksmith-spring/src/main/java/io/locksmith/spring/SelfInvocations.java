package io.locksmith.spring;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;
import org.springframework.asm.Type;

/**
 * Finds calls from a class's own code to its {@link DistributedLock} methods, by reading its bytecode:
 * such a call ({@code this.locked()}) does not go through Spring's proxy, so it runs without the lock.
 * Only calls compiled into the class itself are seen (not a superclass's, nor lambdas' in other classes);
 * a call on another reference of the same class (such as an injected self-reference, which is locked) is
 * reported too, as the receiver is not tracked; the report says so.
 * A class whose bytecode cannot be read yields nothing. Stateless and thread-safe.
 */
final class SelfInvocations {

  private SelfInvocations() {}

  /**
   * @return for each annotated method that the class's own code calls: the names of the calling methods
   */
  static Map<Method, List<String>> find(Class<?> type, Collection<Method> annotated) {
    Map<String, Method> byKey = new LinkedHashMap<>();
    for (Method m : annotated) {
      if (m.getDeclaringClass() == type || m.getDeclaringClass().isAssignableFrom(type)) {
        byKey.put(m.getName() + Type.getMethodDescriptor(m), m);
      }
    }
    Map<Method, List<String>> found = new LinkedHashMap<>();
    if (byKey.isEmpty() || type.getClassLoader() == null) {
      return found;
    }
    String owner = Type.getInternalName(type);
    try (InputStream in = type.getClassLoader().getResourceAsStream(owner + ".class")) {
      if (in == null) {
        return found;
      }
      new ClassReader(in).accept(new ClassVisitor(Opcodes.ASM9) {
        @Override
        public MethodVisitor visitMethod(int access, String caller, String descriptor, String signature, String[] exceptions) {
          return new MethodVisitor(Opcodes.ASM9) {
            @Override
            public void visitMethodInsn(int opcode, String callOwner, String name, String callDescriptor, boolean isInterface) {
              Method target = byKey.get(name + callDescriptor);
              if (target != null && callOwner.equals(owner) && opcode != Opcodes.INVOKESTATIC) {
                List<String> callers = found.computeIfAbsent(target, t -> new ArrayList<>());
                String shown = caller.startsWith("lambda$") ? "a lambda in " + caller.split("\\$")[1] : caller;
                if (!callers.contains(shown)) {
                  callers.add(shown);
                }
              }
            }
          };
        }
      }, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
    } catch (IOException | RuntimeException e) {
      // unreadable or unexpected bytecode: this is a best-effort report only
    }
    return found;
  }
}
